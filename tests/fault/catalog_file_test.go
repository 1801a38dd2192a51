package fault

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/testdb"
)

// operatorCatalog adds one EVM chain and its native coin: an operator's whole change.
const operatorCatalog = `chains:
  - chainId: eip155:7777
    name: Example Testnet
    nativeSymbol: ETH
    nativeDecimals: 18
    isTestnet: true
    confirmations: 4
    tokens:
      - id: eip155:7777/slip44:60
        symbol: ETH
        contractAddress: "0x0000000000000000000000000000000000000000"
        decimals: 18
        type: volatile
        assetType: native
        marketApiId: ethereum
`

// TestOperatorCatalogFile runs the real binary: PAYMENTS_CATALOG_FILE adds a chain that the next
// `serve` lists and serves; started again without the file, the chain is still listed (rows are
// never deleted) but no longer served; a file with a mistake stops the start and says why.
func TestOperatorCatalogFile(t *testing.T) {
	bin := paymentsdBinary(t)
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			db := testdb.URL(t, backend)
			file := filepath.Join(t.TempDir(), "catalog.yaml")
			if err := os.WriteFile(file, []byte(operatorCatalog), 0o600); err != nil {
				t.Fatal(err)
			}
			listed := func(s *server) map[string]bool { // chain id → isEnabled
				out := map[string]bool{}
				for _, c := range apiJSON(t, s.base, "", "GET", "/v1/external/chains", "")["data"].([]any) {
					m := c.(map[string]any)
					out[m["chainId"].(string)] = m["isEnabled"].(bool)
				}
				return out
			}

			srv := newServer(t, bin, db)
			srv.env = []string{"PAYMENTS_CATALOG_FILE=" + file}
			srv.start()
			got := listed(srv)
			if len(got) != 12 || !got["eip155:7777"] {
				t.Fatalf("with the file: want the embedded 11 chains and eip155:7777 served, got %v", got)
			}
			srv.stop()

			srv.env = nil
			srv.start()
			got = listed(srv)
			enabled, ok := got["eip155:7777"]
			if len(got) != 12 || !ok || enabled {
				t.Fatalf("without the file: want eip155:7777 listed and not served, got %v", got)
			}
			srv.stop()

			if err := os.WriteFile(file, []byte(strings.Replace(operatorCatalog, "confirmations: 4", "confirmations: 0", 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "migrate")
			cmd.Dir = rootDir
			cmd.Env = append(daemonEnv(db), "PAYMENTS_CATALOG_FILE="+file)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), file) || !strings.Contains(string(out), "confirmations must be at least 1") {
				t.Fatalf("a bad catalogue file: want a failed start naming the file and the problem, got %v:\n%s", err, out)
			}
		})
	}
}
