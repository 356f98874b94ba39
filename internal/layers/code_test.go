package layers

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// graph is an import graph: a package (its path inside the module) → the
// names it imports (packages inside the module, and the outside names the
// rules track) → a file that imports it.
type graph map[string]map[string]string

// readModule parses the imports of the module's non-test Go files under
// root, whatever their build constraints, leaving out testdata, hidden
// directories and the modules nested in it (tools/). An import outside
// the module is kept when it is, or is inside, a name of known.
func readModule(root string, known map[string]bool) (graph, error) {
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	g := graph{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipDir(root, path, d.Name())
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(d.Name(), "_") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return fmt.Errorf("parse imports: %w", err)
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if g[pkg] == nil {
			g[pkg] = map[string]string{}
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if name, ok := tracked(imp, module, known); ok {
				file, _ := filepath.Rel(root, path)
				g[pkg][name] = filepath.ToSlash(file)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the module's imports: %w", err)
	}
	return g, nil
}

// skipDir says whether the walk leaves out the directory at path.
func skipDir(root, path, name string) error {
	if path == root {
		return nil
	}
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return filepath.SkipDir
	}
	return nil
}

// tracked maps an import to the name the graph keeps it under.
func tracked(imp, module string, known map[string]bool) (string, bool) {
	if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
		return rel, true
	}
	for name := range known {
		if imp == name || strings.HasPrefix(imp, name+"/") {
			return name, true
		}
	}
	return "", false
}

// modulePath reads the module's path from its go.mod.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", fmt.Errorf("read module path: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("read module path: no module line in %s", gomod)
}
