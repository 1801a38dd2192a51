package lifecycle_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The lifecycle core is the one place where statuses change and events are written: these
// store methods may be called from package lifecycle only (tests aside) — and InsertEvent from
// the outbox the core hands its events to (webhooks.Fanout), inside the core's transaction.
var coreOnly = map[string]bool{
	"SavePaymentChange": true, "SaveWithdrawalChange": true, "InsertEvent": true,
	"InsertPayment": true, "InsertWithdrawal": true, "TouchPayment": true, "AppendTransferCredit": true,
	"InsertRefund": true, "SaveRefundChange": true, "AppendRefundLedger": true,
}

func TestOnlyTheCoreWritesStatesAndEvents(t *testing.T) {
	root := ".."
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "gen", "node_modules", ".git", "clients", "docs":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if strings.HasPrefix(rel, "lifecycle"+string(filepath.Separator)) || strings.HasPrefix(rel, "store"+string(filepath.Separator)) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		outbox := rel == filepath.Join("webhooks", "fanout.go")
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && coreOnly[sel.Sel.Name] && !(outbox && sel.Sel.Name == "InsertEvent") {
				t.Errorf("%s: %s is the lifecycle core's; change state through lifecycle.Core", fset.Position(call.Pos()), sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d files checked: the walk is broken", checked)
	}
}
