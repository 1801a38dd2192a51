package fault

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/tokensig"
)

// kill -9 of the real binary between storing the signed relay of a payment made without gas and
// broadcasting it (issue 24): after a restart the stored transaction goes out, exactly once — the
// hot wallet sent one transaction, the deposit address holds exactly the quote, the payer (who
// holds no ETH) paid no gas, and the receipt is sponsored.
func TestGaslessRelaySurvivesKill9(t *testing.T) {
	rig := newDevnetRig(t, filepath.Join(t.TempDir(), "paymentsd.db"),
		"PAYMENTS_SWEEP_MIN_USD=1000000") // no sweeps: the hot wallet sends the relay only
	eth, env := rig.eth, rig.env
	ctx := context.Background()
	m := rig.merchant(t, "Gasless")
	srv := rig.server(t, "PAYMENTS_FAULT_PAUSE_AFTER_SIGN=30s")

	created := apiJSON(t, srv.base, m.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": 2500, "currency": "USD", "orderId": "gasless-kill"}`)
	id, secret := created["paymentId"].(string), created["secret"].(string)
	view := checkoutView(t, srv.base, id, secret)
	var q map[string]any
	for _, x := range view["quotes"].([]any) {
		if x := x.(map[string]any); x["evmChainId"] == float64(devnet.ChainID) && x["tokenSymbol"] == "USDC" {
			q = x
		}
	}
	if q == nil || q["gasless"] == nil {
		t.Fatalf("the devnet USDC quote is not offered without gas: %v", q)
	}
	g := q["gasless"].(map[string]any)
	deposit := common.HexToAddress(q["depositAddress"].(string))
	value := mustBig(t, g["valueAsset"].(string))

	// A payer with the USDC and no ETH signs the quote.
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	payer := crypto.PubkeyToAddress(key.PublicKey)
	funder, err := devnet.AccountKey(2)
	if err != nil {
		t.Fatal(err)
	}
	usdc := common.HexToAddress(devnet.USDCAddress)
	if _, err := devnet.Pay(ctx, eth, funder, devnet.USDCAddress, payer, value); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if b, err := chain.ERC20Balance(ctx, eth, usdc, payer); err == nil && b.Cmp(value) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the payer's USDC did not arrive")
		}
	}
	a := tokensig.Authorization{From: payer, To: deposit, Value: value, ValidAfter: new(big.Int),
		ValidBefore: big.NewInt(int64(g["validBefore"].(float64))), Nonce: crypto.Keccak256Hash([]byte(id))}
	sig, err := tokensig.Sign(key, tokensig.Domain{Name: g["domainName"].(string), Version: g["domainVersion"].(string),
		ChainID: devnet.ChainID, Contract: usdc}, a)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"quoteId": q["id"], "evmChainId": devnet.ChainID, "tokenAddress": devnet.USDCAddress,
		"from": strings.ToLower(payer.Hex()), "to": strings.ToLower(deposit.Hex()), "value": value.String(), "validAfter": 0,
		"validBefore": a.ValidBefore.Int64(), "nonce": a.Nonce.Hex(), "signature": sig.Hex()})
	req, _ := http.NewRequest(http.MethodPost, srv.base+"/v1/external/payment-secret-auth/payments/"+id+"/gasless-payments", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Payment-Secret", secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %d", res.StatusCode)
	}

	hot := devnet.AccountAddress(devnet.HotWalletAccount)
	hotNonce, err := eth.NonceAt(ctx, hot, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The worker signs the relay, stores it, and dies before sending it.
	waitLog(t, srv, "pausing between storing a signed payout and broadcasting it", 30*time.Second)
	srv.kill9()
	if n, err := eth.PendingNonceAt(ctx, hot); err != nil || n != hotNonce {
		t.Fatalf("the relay reached the node before the kill (pending nonce %d, was %d; %v)", n, hotNonce, err)
	}
	srv.env = env
	srv.start()
	waitStatus(t, srv.base, m.SecretKey, id, "completed", 60*time.Second)
	time.Sleep(time.Second) // a few more blocks and rounds: nothing is sent again

	if n, err := eth.NonceAt(ctx, hot, nil); err != nil || n != hotNonce+1 {
		t.Errorf("the hot wallet sent %d transactions, want exactly the one relay (%v)", n-hotNonce, err)
	}
	if got, err := chain.ERC20Balance(ctx, eth, usdc, deposit); err != nil || got.Cmp(value) != 0 {
		t.Errorf("the deposit address holds %v USDC units (%v), want exactly %s", got, err, value)
	}
	if b, err := eth.BalanceAt(ctx, payer, nil); err != nil || b.Sign() != 0 {
		t.Errorf("the payer holds %v wei (%v): it never had any", b, err)
	}
	p := apiJSON(t, srv.base, m.SecretKey, http.MethodGet, "/v1/external/secretkey-auth/payments/"+id, "")
	if r := p["receipt"].(map[string]any); r["txIsSponsored"] != true || r["txSenderAddress"] != strings.ToLower(hot.Hex()) {
		t.Errorf("receipt: sponsored %v, sender %v", r["txIsSponsored"], r["txSenderAddress"])
	}
}
