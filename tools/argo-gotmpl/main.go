// argo-gotmpl renders Go templates as Argo CD's ApplicationSet controller does
// (applicationset/utils/utils.go Render.Replace with goTemplate: text/template with the sprig
// function map minus env, expandenv and getHostByName, plus normalize and toYaml), for
// tools/argo_oracle.py. Reads JSON lines {"template": "...", "data": {...}, "missingkeyError":
// bool} on stdin and writes one JSON line {"out": "..."} or {"err": "..."} per input line.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

type request struct {
	Template        string         `json:"template"`
	Data            map[string]any `json:"data"`
	MissingkeyError bool           `json:"missingkeyError"`
}

var invalid = regexp.MustCompile("[^-a-z0-9.]")

// normalize: lower case, characters outside [-a-z0-9.] as '-', at most 253 bytes, '-' and '.'
// trimmed at both ends (Argo CD's SanitizeName rule).
func normalize(name string) string {
	name = invalid.ReplaceAllString(strings.ToLower(name), "-")
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.Trim(name, "-.")
}

func toYaml(v any) (string, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

func main() {
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	delete(funcs, "getHostByName")
	funcs["normalize"] = normalize
	funcs["toYaml"] = toYaml
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			_ = out.Encode(map[string]string{"err": err.Error()})
			continue
		}
		t := template.New("base").Funcs(funcs)
		if r.MissingkeyError {
			t = t.Option("missingkey=error")
		}
		parsed, err := t.Parse(r.Template)
		if err != nil {
			_ = out.Encode(map[string]string{"err": err.Error()})
			continue
		}
		var buf bytes.Buffer
		if err := parsed.Execute(&buf, r.Data); err != nil {
			_ = out.Encode(map[string]string{"err": err.Error()})
			continue
		}
		_ = out.Encode(map[string]string{"out": buf.String()})
	}
}
