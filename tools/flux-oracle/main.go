// flux-oracle: what kustomize-controller applies for one Flux Kustomization, computed with the
// library functions the controller calls (fluxcd/pkg/kustomize: NewGenerator, WriteFile,
// SecureBuild, SubstituteVariables; fluxcd/pkg/ssa/utils: ReadObjects, SetCommonMetadata; the
// owner labels as ssa's ResourceManager.SetOwnerLabels writes them), in the controller's order
// (kustomize-controller internal/controller/kustomization_controller.go: generate, build,
// apply). It prints each object as one line of compact JSON (Go's encoding/json: keys sorted),
// the form the controller sends to the API server, and exits 1 with the error on stderr.
//
//	flux-oracle --ks ks.yaml --root DIR [--objects vars.yaml] [--strict=true] [--owner-labels=true]
//	            [--ignore TEXT]
//
// --root is the source's checkout; what source-controller puts in its artifact is copied (the
// generator writes the kustomization file into the copy): every file but those its ignore
// rules leave out (.sourceignore files, --ignore as the source's spec.ignore, the defaults).
// --objects holds the ConfigMaps and Secrets substituteFrom may read.
// Not mirrored: SOPS decryption (the oracle never decrypts; an encrypted Secret without
// spec.decryption fails as the controller's decryptor does) and ssa's normalize step (a
// typed round trip of each object before the server-side apply).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	"github.com/fluxcd/pkg/kustomize"
	"github.com/fluxcd/pkg/sourceignore"
	"github.com/fluxcd/pkg/sourceignore/gitignore"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/yaml"
)

const ownerGroup = "kustomize.toolkit.fluxcd.io"

func main() {
	ksFile := flag.String("ks", "", "the Flux Kustomization (one YAML document)")
	root := flag.String("root", "", "the source's root directory")
	objects := flag.String("objects", "", "ConfigMaps and Secrets for substituteFrom (YAML)")
	strict := flag.Bool("strict", true, "strict substitution (kustomize-controller >= v1.9)")
	owner := flag.Bool("owner-labels", true, "add the owner labels")
	ignore := flag.String("ignore", "", "the source's spec.ignore")
	flag.Parse()
	if err := run(*ksFile, *root, *objects, *ignore, *strict, *owner, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ksFile, root, objectsFile, ignore string, strict, owner bool, out io.Writer) error {
	ks, err := readKS(ksFile)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "flux-oracle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyArtifact(root, tmp, ignore); err != nil {
		return fmt.Errorf("copying the source: %w", err)
	}
	specPath, _, _ := unstructured.NestedString(ks.Object, "spec", "path")
	// kustomization_controller.go reconcile: SecureJoin(tmpDir, spec.path), then the path
	// must exist.
	dirPath, err := securejoin.SecureJoin(tmp, specPath)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dirPath); err != nil {
		return fmt.Errorf("kustomization path not found: %s", specPath)
	}
	if _, err := kustomize.NewGenerator(tmp, ks).WriteFile(dirPath); err != nil {
		return fmt.Errorf("kustomize create failed: %w", err)
	}
	m, err := kustomize.SecureBuild(tmp, dirPath, false)
	if err != nil {
		return fmt.Errorf("kustomize build failed: %w", err)
	}
	c, err := fakeClient(objectsFile)
	if err != nil {
		return err
	}
	_, hasPostBuild, _ := unstructured.NestedMap(ks.Object, "spec", "postBuild")
	_, hasDecryption, _ := unstructured.NestedMap(ks.Object, "spec", "decryption")
	strategy, _, _ := unstructured.NestedString(ks.Object, "spec", "postBuild", "substituteStrategy")
	for _, res := range m.Resources() {
		if res.GetName() == "" || res.GetKind() == "" || res.GetApiVersion() == "" {
			return fmt.Errorf("failed to decode Kubernetes apiVersion, kind and name from: %v", res.String())
		}
		if !hasDecryption && isEncryptedSecret(res) {
			return fmt.Errorf("Secret/%s/%s is SOPS encrypted, configuring decryption is required for this secret to be reconciled",
				res.GetNamespace(), res.GetName())
		}
		if hasPostBuild {
			outRes, err := kustomize.SubstituteVariables(context.Background(), c, ks, res,
				kustomize.SubstituteWithStrict(strict),
				kustomize.SubstituteWithAlways(strategy == "Always"))
			if err != nil {
				return fmt.Errorf("post build failed for '%s': %w", res.GetName(), err)
			}
			if outRes != nil {
				if _, err := m.Replace(res); err != nil {
					return err
				}
			}
		}
	}
	manifests, err := m.AsYaml()
	if err != nil {
		return err
	}
	objs, err := ssautil.ReadObjects(bytes.NewReader(manifests))
	if err != nil {
		return err
	}
	if owner {
		for _, o := range objs {
			labels := o.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[ownerGroup+"/name"] = ks.GetName()
			labels[ownerGroup+"/namespace"] = ks.GetNamespace()
			o.SetLabels(labels)
		}
	}
	cmLabels, _, _ := unstructured.NestedStringMap(ks.Object, "spec", "commonMetadata", "labels")
	cmAnnotations, _, _ := unstructured.NestedStringMap(ks.Object, "spec", "commonMetadata", "annotations")
	ssautil.SetCommonMetadata(objs, cmLabels, cmAnnotations)
	for _, o := range objs {
		line, err := json.Marshal(o.Object)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", line)
	}
	return nil
}

func readKS(path string) (unstructured.Unstructured, error) {
	var u unstructured.Unstructured
	data, err := os.ReadFile(path)
	if err != nil {
		return u, err
	}
	obj := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return u, fmt.Errorf("%s: %w", path, err)
	}
	u.Object = obj
	if u.GetNamespace() == "" {
		u.SetNamespace("default")
	}
	return u, nil
}

// fakeClient holds the ConfigMaps and Secrets of the objects file, a Secret's stringData
// turned into data as the API server stores it.
func fakeClient(path string) (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	b := fake.NewClientBuilder().WithScheme(scheme)
	if path == "" {
		return b.Build(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := ssautil.ReadObjects(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cm); err != nil {
				return nil, err
			}
			b = b.WithObjects(&cm)
		case "Secret":
			var s corev1.Secret
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &s); err != nil {
				return nil, err
			}
			if s.Data == nil {
				s.Data = map[string][]byte{}
			}
			for k, v := range s.StringData {
				s.Data[k] = []byte(v)
			}
			s.StringData = nil
			b = b.WithObjects(&s)
		}
	}
	return b.Build(), nil
}

// isEncryptedSecret: a v1 Secret that SOPS encrypted (its `sops` metadata, or a data value
// in SOPS's `ENC[...]` form), which the controller refuses to apply without spec.decryption
// (kustomize-controller internal/decryptor, "configuring decryption is required").
func isEncryptedSecret(res *resource.Resource) bool {
	if res.GetKind() != "Secret" || res.GetApiVersion() != "v1" {
		return false
	}
	if res.GetAnnotations()["kustomize.toolkit.fluxcd.io/decrypt"] == "disabled" {
		return false
	}
	m, err := res.Map()
	if err != nil {
		return false
	}
	if _, ok := m["sops"]; ok {
		return true
	}
	for _, field := range []string{"data", "stringData"} {
		values, _ := m[field].(map[string]interface{})
		for _, v := range values {
			if s, ok := v.(string); ok && strings.HasPrefix(s, "ENC[") {
				return true
			}
		}
	}
	return false
}

// copyArtifact copies what source-controller archives of the checkout at root into dst:
// gitrepository_controller.go reconcileArtifact loads the ignore patterns
// (sourceignore.LoadIgnorePatterns with the checkout's path as domain, then spec.ignore) and
// archives through fluxcd/pkg/artifact storage.SourceIgnoreFilter (the default rules only when
// there are no patterns; the VCS rules always), which Storage.Archive asks about every file on
// its own absolute path, skipping anything that is not a regular file or a directory.
func copyArtifact(root, dst, ignore string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return err
	}
	domain := strings.Split(root, string(filepath.Separator))
	ps, err := sourceignore.LoadIgnorePatterns(root, domain)
	if err != nil {
		return err
	}
	if ignore != "" {
		ps = append(ps, sourceignore.ReadPatterns(strings.NewReader(ignore), domain)...)
	}
	matcher := sourceignore.NewDefaultMatcher(ps, domain)
	if len(ps) > 0 {
		matcher = sourceignore.NewMatcher(append(sourceignore.VCSPatterns(domain), ps...))
	}
	var _ gitignore.Matcher = matcher
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if m := info.Mode(); !(m.IsRegular() || m.IsDir()) {
			return nil
		}
		if matcher.Match(strings.Split(p, string(filepath.Separator)), d.IsDir()) {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
