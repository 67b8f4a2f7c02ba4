// flux-oracle: what kustomize-controller applies for one Flux Kustomization, computed with the
// library functions the controller calls (fluxcd/pkg/kustomize: NewGenerator, WriteFile,
// SecureBuild, SubstituteVariables; fluxcd/pkg/ssa/utils: ReadObjects, SetCommonMetadata; the
// owner labels as ssa's ResourceManager.SetOwnerLabels writes them), in the controller's order
// (kustomize-controller internal/controller/kustomization_controller.go: generate, build,
// apply). It prints each object as one line of compact JSON (Go's encoding/json: keys sorted),
// the form the controller sends to the API server, and exits 1 with the error on stderr.
//
//	flux-oracle --ks ks.yaml --root DIR [--objects vars.yaml] [--strict=true] [--owner-labels=true]
//
// --root is the source's root (the artifact); it is copied, since the generator writes the
// kustomization file. --objects holds the ConfigMaps and Secrets substituteFrom may read.
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
	"os"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	"github.com/fluxcd/pkg/kustomize"
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
	flag.Parse()
	if err := run(*ksFile, *root, *objects, *strict, *owner, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ksFile, root, objectsFile string, strict, owner bool, out io.Writer) error {
	ks, err := readKS(ksFile)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "flux-oracle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(tmp, os.DirFS(root)); err != nil {
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

