package fault

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// testWallet is a browser wallet for the Chromium tests: an EIP-1193 provider injected into
// every page the tab loads, announced by EIP-6963 (or, with legacy, only set as
// window.ethereum), whose requests a chromedp binding hands to Go — which answers them with a
// devnet key, signing eth_signTypedData_v4 with go-ethereum's apitypes (the EIP-712 hash any
// wallet computes). The test sets what it answers: the chain it is on, whether it may switch,
// and requests the "person" declines (EIP-1193 error 4001).
type testWallet struct {
	key    *ecdsa.PrivateKey
	addr   string
	legacy bool

	mu         sync.Mutex
	chainID    int64
	switchable bool
	decline    map[string]bool // methods answered with 4001 (user rejected)
	signed     []apitypes.TypedData
	// rpc: the chains the wallet knows (chain id → RPC URL), through which it sends transactions
	// and answers reads (browser_wallet_tx_test.go); nil: it knows every chain and only signs.
	rpc  map[int64]string
	sent []string // hashes of the transactions it sent
}

const walletBinding = "__paymentsdTestWallet"

func newTestWallet(key *ecdsa.PrivateKey, chainID int64) *testWallet {
	return &testWallet{key: key, addr: strings.ToLower(crypto.PubkeyToAddress(key.PublicKey).Hex()), chainID: chainID,
		switchable: true, decline: map[string]bool{}}
}

func (w *testWallet) set(f func(w *testWallet)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(w)
}

func (w *testWallet) signatures() []apitypes.TypedData {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]apitypes.TypedData(nil), w.signed...)
}

// walletScript is the provider the page sees: request() posts {id, method, params} to the
// binding and waits for Go's answer (window.__paymentsdTestWalletReply).
func walletScript(legacy bool) string {
	return `(() => {
  let n = 0;
  const pending = new Map();
  window.__paymentsdTestWalletReply = (id, result, error) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (error) p.reject(Object.assign(new Error(error.message), { code: error.code }));
    else p.resolve(result);
  };
  const provider = {
    isPaymentsdTestWallet: true,
    request: ({ method, params }) => new Promise((resolve, reject) => {
      const id = ++n;
      pending.set(id, { resolve, reject });
      window.` + walletBinding + `(JSON.stringify({ id, method, params: params ?? [] }));
    }),
    on() {},
    removeListener() {},
  };
  if (` + fmt.Sprint(legacy) + `) { window.ethereum = provider; return; }
  const info = Object.freeze({ uuid: "6f1f3d3e-8b7a-4c55-9b6e-2f0d0c1a2b3c", name: "Go Test Wallet", rdns: "test.paymentsd.wallet",
    icon: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 8 8'%3E%3Crect width='8' height='8' fill='%232457d6'/%3E%3C/svg%3E" });
  const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }));
  window.addEventListener("eip6963:requestProvider", announce);
  announce();
})();`
}

// injectWallet installs the wallet in the tab (for every page it loads from now on).
func injectWallet(t *testing.T, ctx context.Context, w *testWallet) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, runtime.AddBinding, runtime.AddBindingParams{Name: walletBinding}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: walletScript(w.legacy)})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		b, ok := ev.(*runtime.EventBindingCalled)
		if !ok || b.Name != walletBinding {
			return
		}
		go w.answer(ctx, b)
	}); err != nil {
		t.Fatal(err)
	}
}

type walletError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (w *testWallet) answer(ctx context.Context, b *runtime.EventBindingCalled) {
	var req struct {
		ID     int               `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	var result any
	var werr *walletError
	if err := json.Unmarshal([]byte(b.Payload), &req); err != nil {
		werr = &walletError{-32700, err.Error()}
	} else {
		result, werr = w.handle(req.Method, req.Params)
	}
	res, _ := json.Marshal(result)
	e, _ := json.Marshal(werr)
	expr := fmt.Sprintf("window.__paymentsdTestWalletReply(%d, %s, %s)", req.ID, res, e)
	_ = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ContextID: b.ExecutionContextID})
		return err
	}))
}

func (w *testWallet) handle(method string, params []json.RawMessage) (any, *walletError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.decline[method] {
		return nil, &walletError{4001, "User rejected the request."}
	}
	switch method {
	case "eth_requestAccounts", "eth_accounts":
		return []string{w.addr}, nil
	case "eth_chainId":
		return fmt.Sprintf("0x%x", w.chainID), nil
	case "wallet_switchEthereumChain":
		if !w.switchable || len(params) == 0 {
			return nil, &walletError{4902, "Unrecognized chain ID. Try adding the chain using wallet_addEthereumChain first."}
		}
		var arg struct {
			ChainID string `json:"chainId"`
		}
		if err := json.Unmarshal(params[0], &arg); err != nil {
			return nil, &walletError{-32602, err.Error()}
		}
		id, err := hexutil.DecodeUint64(arg.ChainID)
		if err != nil {
			return nil, &walletError{-32602, err.Error()}
		}
		if w.rpc != nil && w.rpc[int64(id)] == "" {
			return nil, &walletError{4902, "Unrecognized chain ID. Try adding the chain using wallet_addEthereumChain first."}
		}
		w.chainID = int64(id)
		return nil, nil
	case "eth_signTypedData_v4":
		return w.signTypedData(params)
	}
	return w.onChain(method, params)
}

// signTypedData signs as MetaMask does: params [address, JSON of the typed data]; the domain's
// chainId must be the wallet's chain; v is 27 or 28.
func (w *testWallet) signTypedData(params []json.RawMessage) (any, *walletError) {
	var from, doc string
	if len(params) != 2 || json.Unmarshal(params[0], &from) != nil || json.Unmarshal(params[1], &doc) != nil {
		return nil, &walletError{-32602, "eth_signTypedData_v4 takes [address, typedDataJSON]"}
	}
	if !strings.EqualFold(from, w.addr) {
		return nil, &walletError{4100, "The requested account has not been authorized by the user."}
	}
	var td apitypes.TypedData
	if err := json.Unmarshal([]byte(doc), &td); err != nil {
		return nil, &walletError{-32602, "typed data: " + err.Error()}
	}
	if td.Domain.ChainId == nil || (*big.Int)(td.Domain.ChainId).Int64() != w.chainID {
		return nil, &walletError{-32602, fmt.Sprintf("Provided chainId %v must match the active chainId %d", td.Domain.ChainId, w.chainID)}
	}
	hash, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return nil, &walletError{-32603, err.Error()}
	}
	sig, err := crypto.Sign(hash, w.key)
	if err != nil {
		return nil, &walletError{-32603, err.Error()}
	}
	sig[64] += 27
	w.signed = append(w.signed, td)
	return hexutil.Encode(sig), nil
}
