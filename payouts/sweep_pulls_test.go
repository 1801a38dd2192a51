package payouts_test

import (
	"crypto/ecdsa"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/tokensig"
)

func TestChooseSweepMethod(t *testing.T) {
	usdc := domain.Token{AssetType: domain.ERC20, EIP3009: true, EIP2612: true}
	permitOnly := domain.Token{AssetType: domain.ERC20, EIP2612: true}
	usdt := domain.Token{AssetType: domain.ERC20}
	eth := domain.Token{AssetType: domain.Native}
	all := payouts.DefaultSweepMethods
	for _, c := range []struct {
		name               string
		prefs              []payouts.SweepMethod
		tok                domain.Token
		contracts, has7702 bool
		want               payouts.SweepMethod
	}{
		{"EIP-7702 first where the chain has it", all, usdc, true, true, payouts.SweepEIP7702},
		{"any ERC-20 by EIP-7702", all, usdt, true, true, payouts.SweepEIP7702},
		{"EIP-3009 without EIP-7702", all, usdc, true, false, payouts.SweepEIP3009},
		{"EIP-2612 when the token has only that", all, permitOnly, true, false, payouts.SweepEIP2612},
		{"neither extension nor EIP-7702: topped up", all, usdt, true, false, payouts.SweepTopUp},
		{"no sweep contracts: topped up", all, usdc, false, true, payouts.SweepTopUp},
		{"the native token sweeps itself", all, eth, true, true, payouts.SweepTopUp},
		{"preference order is the caller's", []payouts.SweepMethod{payouts.SweepEIP2612, payouts.SweepEIP3009}, usdc, true, true, payouts.SweepEIP2612},
		{"top-up preferred", []payouts.SweepMethod{payouts.SweepTopUp, payouts.SweepEIP7702}, usdc, true, true, payouts.SweepTopUp},
		{"no preference", nil, usdc, true, true, payouts.SweepTopUp},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, payouts.ChooseSweepMethod(c.prefs, c.tok, c.contracts, c.has7702))
		})
	}
}

func transferLog(token, from, to common.Address, v int64) *types.Log {
	return &types.Log{Address: token, Topics: []common.Hash{crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)")),
		common.BytesToHash(from[:]), common.BytesToHash(to[:])}, Data: common.BigToHash(big.NewInt(v)).Bytes()}
}

// Reconciliation reads the token's own logs: only its Transfers to the hot wallet count, summed
// per sender; anything else in the receipt (another token, another recipient, a removed log, an
// Approval) is not a pull.
func TestPulled(t *testing.T) {
	token, other, hot := common.Address{0x70}, common.Address{0x71}, common.Address{0x40}
	a, b, c := common.Address{1}, common.Address{2}, common.Address{3}
	removed := transferLog(token, c, hot, 5)
	removed.Removed = true
	approval := transferLog(token, c, hot, 5)
	approval.Topics[0] = crypto.Keccak256Hash([]byte("Approval(address,address,uint256)"))
	logs := []*types.Log{transferLog(token, a, hot, 10), transferLog(token, b, hot, 20), transferLog(token, a, hot, 1),
		transferLog(other, c, hot, 7), transferLog(token, c, common.Address{0x41}, 7), removed, approval}
	got := payouts.Pulled(logs, token, hot)
	assert.Len(t, got, 2)
	assert.Equal(t, "11", got[a].String())
	assert.Equal(t, "20", got[b].String())
	assert.Nil(t, got[c])
}

func TestPullFailures(t *testing.T) {
	batch := common.HexToAddress(devnet.SweepBatchAddress)
	ev := devnet.SweepBatchABI().Events["PullFailed"]
	reason, err := (&errorABI).Pack("Error", "transfer amount exceeds balance")
	require.NoError(t, err)
	mk := func(i int64, from common.Address, why []byte) *types.Log {
		data, err := ev.Inputs.NonIndexed().Pack(why)
		require.NoError(t, err)
		return &types.Log{Address: batch, Topics: []common.Hash{ev.ID, common.BigToHash(big.NewInt(i)), common.BytesToHash(from[:])}, Data: data}
	}
	a, b, c := common.Address{1}, common.Address{2}, common.Address{3}
	elsewhere := mk(2, c, nil)
	elsewhere.Address = common.Address{9}
	got := payouts.PullFailures([]*types.Log{mk(0, a, reason), mk(1, b, nil), elsewhere}, batch)
	assert.Equal(t, map[common.Address]string{a: "transfer amount exceeds balance", b: "the pull reverted without a reason"}, got)
}

func pulls(t *testing.T, n int) []payouts.Pull {
	out := make([]payouts.Pull, n)
	for i := range out {
		k, err := crypto.GenerateKey()
		require.NoError(t, err)
		out[i] = payouts.Pull{SweepID: uuid.Must(uuid.NewV7()), Key: k, Amount: big.NewInt(int64(1000 + i))}
	}
	return out
}

func addr(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

// Each EIP-3009 pull in the batch's calldata is the deposit key's signature of exactly the
// authorization the token will check: to the collector, for the amount, with the sweep's nonce.
func TestBuild3009(t *testing.T) {
	d := tokensig.Domain{Name: "USD Coin", Version: "2", ChainID: 1337, Contract: common.HexToAddress(devnet.USDCAddress)}
	collector, until := common.Address{0x40}, big.NewInt(1_900_000_000)
	ps := pulls(t, 3)
	call, err := payouts.Build3009(d, collector, until, ps)
	require.NoError(t, err)
	assert.Empty(t, call.Auths)
	m := devnet.SweepBatchABI().Methods["transferWithAuthorizations"]
	require.Equal(t, m.ID, call.Data[:4])
	args, err := m.Inputs.Unpack(call.Data[4:])
	require.NoError(t, err)
	assert.Equal(t, d.Contract, args[0].(common.Address))
	items := args[1].([]struct {
		From        common.Address `json:"from"`
		Value       *big.Int       `json:"value"`
		ValidBefore *big.Int       `json:"validBefore"`
		Nonce       [32]byte       `json:"nonce"`
		V           uint8          `json:"v"`
		R           [32]byte       `json:"r"`
		S           [32]byte       `json:"s"`
	})
	require.Len(t, items, 3)
	for i, it := range items {
		assert.Equal(t, addr(ps[i].Key), it.From)
		assert.Equal(t, ps[i].Amount, it.Value)
		assert.Equal(t, until, it.ValidBefore)
		assert.Equal(t, payouts.AuthorizationNonce(ps[i].SweepID), common.Hash(it.Nonce))
		a := tokensig.Authorization{From: it.From, To: collector, Value: it.Value, ValidAfter: new(big.Int), ValidBefore: until, Nonce: it.Nonce}
		signer, err := tokensig.Recover(d, a, tokensig.Signature{V: it.V, R: it.R, S: it.S})
		require.NoError(t, err)
		assert.Equal(t, it.From, signer)
	}
	assert.NotEqual(t, payouts.AuthorizationNonce(ps[0].SweepID), payouts.AuthorizationNonce(ps[1].SweepID))
}

// EIP-7702: an authorization only for the accounts not yet delegated, at each one's nonce, for
// the chain and the delegate; every account is pulled.
func TestBuild7702(t *testing.T) {
	delegate, token := common.HexToAddress(devnet.SweepDelegateAddress), common.HexToAddress(devnet.USDTAddress)
	ps := pulls(t, 3)
	call, err := payouts.Build7702(31337, token, delegate, []payouts.Delegation{{Nonce: 4}, {Delegated: true}, {}}, ps)
	require.NoError(t, err)
	require.Len(t, call.Auths, 2)
	for i, want := range []struct {
		who   *ecdsa.PrivateKey
		nonce uint64
	}{{ps[0].Key, 4}, {ps[2].Key, 0}} {
		a := call.Auths[i]
		assert.Equal(t, delegate, a.Address)
		assert.Equal(t, uint64(31337), a.ChainID.Uint64())
		assert.Equal(t, want.nonce, a.Nonce)
		signer, err := a.Authority()
		require.NoError(t, err)
		assert.Equal(t, addr(want.who), signer)
	}
	args, err := devnet.SweepBatchABI().Methods["sweepDelegated"].Inputs.Unpack(call.Data[4:])
	require.NoError(t, err)
	assert.Equal(t, []common.Address{addr(ps[0].Key), addr(ps[1].Key), addr(ps[2].Key)}, args[1])
	_, err = payouts.Build7702(1, token, delegate, nil, ps)
	assert.Error(t, err)
}

// errorABI encodes Solidity's Error(string) revert data.
var errorABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[{"type":"function","name":"Error","inputs":[{"name":"","type":"string"}]}]`))
	if err != nil {
		panic(err)
	}
	return a
}()

// Each EIP-2612 pull is the owner's permit to the batch contract for the amount at its own
// nonce; nonces must come one per pull.
func TestBuild2612(t *testing.T) {
	d := tokensig.Domain{Name: "USD Coin", Version: "2", ChainID: 1337, Contract: common.HexToAddress(devnet.USDCAddress)}
	batch, deadline := common.HexToAddress(devnet.SweepBatchAddress), big.NewInt(1_900_000_000)
	ps := pulls(t, 2)
	nonces := []*big.Int{big.NewInt(0), big.NewInt(7)}
	call, err := payouts.Build2612(d, batch, deadline, nonces, ps)
	require.NoError(t, err)
	args, err := devnet.SweepBatchABI().Methods["permitsAndPulls"].Inputs.Unpack(call.Data[4:])
	require.NoError(t, err)
	items := args[1].([]struct {
		Owner    common.Address `json:"owner"`
		Value    *big.Int       `json:"value"`
		Deadline *big.Int       `json:"deadline"`
		V        uint8          `json:"v"`
		R        [32]byte       `json:"r"`
		S        [32]byte       `json:"s"`
	})
	require.Len(t, items, 2)
	for i, it := range items {
		p := tokensig.Permit{Owner: it.Owner, Spender: batch, Value: it.Value, Nonce: nonces[i], Deadline: it.Deadline}
		signer, err := tokensig.Recover(d, p, tokensig.Signature{V: it.V, R: it.R, S: it.S})
		require.NoError(t, err)
		assert.Equal(t, addr(ps[i].Key), signer)
		assert.Equal(t, ps[i].Amount, it.Value)
	}
	_, err = payouts.Build2612(d, batch, deadline, nonces[:1], ps)
	assert.Error(t, err)
}
