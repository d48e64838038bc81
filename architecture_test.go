package ckpt_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const modulePath = "github.com/ckpt-dev/ckpt"

// layerRank orders the layers of ARCHITECTURE.md: a package may import
// packages of a lower rank, and of its own rank where sameLayer allows.
// Support packages are tools any layer may use.
var layerRank = map[string]int{
	"domain":  0,
	"support": 1,
	"backend": 2,
	"format":  2,
	"service": 3,
	"surface": 4,
	"binary":  5,
}

// sameLayer says which layers may import packages of their own layer:
// services build on services and surfaces on surfaces (servercli on cli),
// formats on protocols; backends never import each other.
var sameLayer = map[string]bool{"support": true, "format": true, "service": true, "surface": true}

var publicLayers = map[string]bool{"domain": true, "backend": true, "format": true}

// TestArchitecture holds the repository to its map: every package is in
// ARCHITECTURE.md's table with a layer, and every import points down.
func TestArchitecture(t *testing.T) {
	layers := readMapLayers(t)
	pkgs := listPackages(t)
	for _, p := range pkgs {
		rel := relPath(p.ImportPath)
		layer, ok := layers[rel]
		if !ok {
			t.Errorf("package %s is not in ARCHITECTURE.md's package table: add a row (package, layer, what it owns)", rel)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, modulePath) {
				if layer == "domain" && !isStdlib(imp) {
					t.Errorf("the root package imports %s: the domain imports only the standard library", imp)
				}
				continue
			}
			checkImport(t, rel, layer, relPath(imp), layers)
		}
	}
	for rel := range layers {
		if !hasPackage(pkgs, rel) {
			t.Errorf("ARCHITECTURE.md names package %s, which does not exist: remove its row", rel)
		}
	}
}

func checkImport(t *testing.T, from, fromLayer, to string, layers map[string]string) {
	t.Helper()
	toLayer, ok := layers[to]
	if !ok {
		return // reported as missing from the table on its own
	}
	switch {
	case toLayer == "support" && fromLayer != "domain":
		return
	case publicLayers[fromLayer] && !publicLayers[toLayer] && toLayer != "support":
		t.Errorf("%s (%s, public) imports %s (%s): public packages never import the application", from, fromLayer, to, toLayer)
	case layerRank[toLayer] > layerRank[fromLayer]:
		t.Errorf("%s (%s) imports %s (%s): imports point down the layers of ARCHITECTURE.md", from, fromLayer, to, toLayer)
	case layerRank[toLayer] == layerRank[fromLayer] && fromLayer != toLayer:
		t.Errorf("%s (%s) imports %s (%s): a %s package does not import a %s package", from, fromLayer, to, toLayer, fromLayer, toLayer)
	case toLayer == fromLayer && !sameLayer[fromLayer]:
		t.Errorf("%s imports %s: two %s packages never import each other", from, to, fromLayer)
	}
}

// tableRow matches a row of the package table: | `path` | layer | ... |
var tableRow = regexp.MustCompile("^\\| `([^`]+)`(?: \\(ckpt\\))? \\| ([a-z]+) \\|")

func readMapLayers(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("ARCHITECTURE.md")
	if err != nil {
		t.Fatalf("the map is missing: %v", err)
	}
	defer f.Close()
	layers := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := tableRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if _, ok := layerRank[m[2]]; !ok {
			t.Errorf("ARCHITECTURE.md gives %s the layer %q; the layers are domain, support, backend, format, service, surface, binary", m[1], m[2])
		}
		layers[m[1]] = m[2]
	}
	if len(layers) < 10 {
		t.Fatalf("read only %d package rows from ARCHITECTURE.md; is the table's form still | `path` | layer | what |?", len(layers))
	}
	return layers
}

type listedPackage struct {
	ImportPath string
	Imports    []string
}

func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func relPath(importPath string) string {
	if importPath == modulePath {
		return "."
	}
	return strings.TrimPrefix(importPath, modulePath+"/")
}

func hasPackage(pkgs []listedPackage, rel string) bool {
	for _, p := range pkgs {
		if relPath(p.ImportPath) == rel {
			return true
		}
	}
	return false
}

// isStdlib reports whether an import path is the standard library's: its
// first element has no dot.
func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
