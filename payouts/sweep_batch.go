package payouts

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Sweeping without top-ups: the deposit addresses holding one token are swept together by one
// transaction of the hot wallet to the SweepBatch contract, carrying each address's signed pull
// (sweep_pulls.go). No native token ever goes to those addresses: the hot wallet pays the gas,
// once per batch rather than twice per address. The batch goes through the transaction manager
// like a payout: signed and stored with the sweeps it carries before it is broadcast, its nonce
// the hot wallet's, bumped when slow, never re-signed with other content. Its outcome is read per
// sweep from its receipt (sweep_reconcile.go).

// DefaultSweepBatchMax is the most pulls one batch carries: about 3.5 million gas on the
// devnet, far under a block, and under EIP-7825's 2^24 cap per transaction at any method's
// measured cost (docs/benchmarks.md).
const DefaultSweepBatchMax = 100

// batchGroup is the candidates one batch may carry: one token, one method.
type batchGroup struct {
	method SweepMethod
	tok    domain.Token
	cands  []store.SweepCandidate
}

// startBatch sweeps cands (deposit addresses holding tok) in one batch by method. It reports
// how many sweeps it recorded (an address found empty counts: its transfers are covered), and
// why it signed nothing when the hot wallet cannot pay the gas.
func (m *Manager) startBatch(ctx context.Context, g batchGroup) (int, string, error) {
	safe, err := m.safeBlock(ctx)
	if err != nil {
		return 0, "", err
	}
	token := common.HexToAddress(g.tok.ContractAddress)
	var (
		started int
		pulls   []Pull
		sweeps  []store.Sweep
	)
	for _, c := range g.cands {
		addr := common.HexToAddress(c.Address)
		sw := store.Sweep{ID: uuid.Must(uuid.NewV7()), ChainID: m.Info.ID, Address: strings.ToLower(c.Address), KeyIndex: c.KeyIndex,
			TokenID: g.tok.ID, CreatedAt: m.Now()}
		bal, err := chain.ERC20BalanceAt(ctx, m.Chain, token, addr, big.NewInt(safe))
		if err != nil {
			return started, "", err
		}
		if bal.Sign() == 0 {
			if err := m.emptySweep(ctx, sw, safe); err != nil {
				return started, "", err
			}
			started++
			continue
		}
		if c.KeyIndex < 0 || c.KeyIndex >= 1<<31 {
			return started, "", fmt.Errorf("sweep %s at %s: key index %d out of range", g.tok.ID, c.Address, c.KeyIndex)
		}
		key, err := m.Deposits.Key(uint32(c.KeyIndex))
		if err != nil {
			return started, "", err
		}
		if crypto.PubkeyToAddress(key.PublicKey) != addr {
			return started, "", fmt.Errorf("the deposit key's index %d is not %s: the deposit key does not match the addresses",
				c.KeyIndex, sw.Address)
		}
		amount := decimal.NewFromBigInt(bal, 0)
		sw.Status, sw.AmountAsset = store.SweepSigned, &amount
		pulls, sweeps = append(pulls, Pull{SweepID: sw.ID, Key: key, Amount: bal}), append(sweeps, sw)
	}
	if len(pulls) == 0 {
		return started, "", nil
	}
	call, gas, err := m.fitBatch(ctx, g, pulls)
	if err != nil {
		return started, "", err
	}
	// What did not fit waits for the next pass: its transfers are not covered yet.
	pulls, sweeps = pulls[:len(call.pulls)], sweeps[:len(call.pulls)]
	total := new(big.Int)
	for _, p := range pulls {
		total.Add(total, p.Amount)
	}
	hot, batch := m.Wallet.Address(), common.HexToAddress(m.Config.SweepBatch)
	tip, feeCap, err := m.tx.Fees(ctx)
	if err != nil {
		return started, "", err
	}
	o := store.OutgoingTx{ID: uuid.Must(uuid.NewV7()), ChainID: m.Info.ID, Sender: strings.ToLower(hot.Hex()), Kind: store.TxSweep,
		TokenID: g.tok.ID, Recipient: strings.ToLower(hot.Hex()), AmountAsset: decimal.NewFromBigInt(total, 0),
		TxTo: strings.ToLower(batch.Hex()), TxValue: decimal.Zero, TxData: hex.EncodeToString(call.Data),
		GasLimit: int64(gas), CreatedAt: m.Now()}
	if len(call.Auths) > 0 {
		j, err := json.Marshal(call.Auths)
		if err != nil {
			return started, "", err
		}
		o.AuthList = string(j)
	}
	if short, err := m.tx.HotShort(ctx, o, feeCap); err != nil || short != "" {
		return started, short, err
	}
	for i := range sweeps {
		sweeps[i].SweepTxID = &o.ID
	}
	a, err := m.tx.SignAndStore(ctx, &o, tip, feeCap, func(tx *store.Tx) error {
		for _, sw := range sweeps {
			if _, err := tx.InsertSweep(sw, safe); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return started, "", err
	}
	m.Log.Info("sweep batch signed", "chain", chains.CAIP2(m.Info.ID), "token", g.tok.Symbol, "method", g.method,
		"addresses", len(sweeps), "delegations", len(call.Auths), "amount", o.AmountAsset.String(), "tx", a.Hash)
	if !m.tx.PauseAfterSign(ctx, a) {
		return started + len(sweeps), "", nil
	}
	return started + len(sweeps), "", m.tx.Broadcast(ctx, o, a)
}

// batchGroups takes out of cands those a batched method sweeps, grouped by token and method in
// candidate order, and marks their addresses busy (the one-by-one path skips them).
func (m *Manager) batchGroups(ctx context.Context, cands []store.SweepCandidate, forced bool, busy map[string]bool) ([]batchGroup, error) {
	prefs := m.Config.SweepMethods
	if prefs == nil {
		prefs = DefaultSweepMethods
	}
	has7702 := m.Config.SweepEIP7702 && m.Config.SweepDelegate != ""
	var (
		groups          []batchGroup
		at              = map[string]int{}
		checked, usable bool
		why             string
	)
	for _, c := range cands {
		tok, ok := m.Catalog.Tokens[c.TokenID]
		if !ok || tok.AssetType != domain.ERC20 || busy[c.Address] {
			continue
		}
		if !checked {
			checked = true
			if usable, why = m.sweepContracts(ctx); why != m.contractsWhy {
				m.contractsWhy = why // said once, not every pass
				if why != "" {
					m.Log.Warn("tokens are swept with gas top-ups: "+why, "chain", chains.CAIP2(m.Info.ID))
				}
			}
		}
		method := ChooseSweepMethod(prefs, tok, usable, has7702)
		if method == SweepTopUp {
			continue
		}
		worth, err := m.worthSweeping(ctx, c, tok, forced)
		if err != nil {
			return nil, err
		}
		if !worth {
			continue
		}
		busy[c.Address] = true
		k := tok.ID + " " + string(method)
		i, ok := at[k]
		if !ok {
			i, at[k] = len(groups), len(groups)
			groups = append(groups, batchGroup{method: method, tok: tok})
		}
		groups[i].cands = append(groups[i].cands, c)
	}
	return groups, nil
}

// MaxBatchGas is the most gas a batch transaction may ask for: EIP-7825's cap per transaction
// (Osaka; 2^24). A node refuses a transaction above it outright, and a stored transaction no
// node takes would hold the hot wallet's nonce, and every payout behind it, forever.
const MaxBatchGas = 1 << 24

// fittedCall is a built batch with the pulls it carries (a prefix of those asked for).
type fittedCall struct {
	BatchCall
	pulls []Pull
}

// fitBatch builds the batch for pulls and its gas limit (the estimate and a quarter more, for
// state that moves before it is mined), dropping pulls from the end until that limit is at most
// MaxBatchGas. Gas per pull varies by method and chain (a storage slot created costs 22,100 gas
// on Osaka, about 110,000 under EIP-8037), so the fit is measured, not assumed.
func (m *Manager) fitBatch(ctx context.Context, g batchGroup, pulls []Pull) (fittedCall, uint64, error) {
	hot, batch := m.Wallet.Address(), common.HexToAddress(m.Config.SweepBatch)
	for {
		call, err := m.buildBatch(ctx, g.method, g.tok, pulls)
		if err != nil {
			return fittedCall{}, 0, err
		}
		gas, err := m.Chain.EstimateGas(ctx, ethereum.CallMsg{From: hot, To: &batch, Data: call.Data, AuthorizationList: call.Auths})
		if err != nil {
			return fittedCall{}, 0, fmt.Errorf("estimate a %s sweep batch's gas: %w", g.method, err)
		}
		limit := gas + gas/4
		if limit <= MaxBatchGas {
			return fittedCall{BatchCall: call, pulls: pulls}, limit, nil
		}
		if len(pulls) == 1 {
			return fittedCall{}, 0, fmt.Errorf("one %s pull needs %d gas, over the cap of %d per transaction", g.method, limit, MaxBatchGas)
		}
		keep := max(1, min(len(pulls)-1, int(uint64(len(pulls))*MaxBatchGas/limit)))
		pulls = pulls[:keep]
	}
}

// chunks splits a group into batches of at most size candidates.
func (g batchGroup) chunks(size int) []batchGroup {
	if size <= 0 {
		size = DefaultSweepBatchMax
	}
	var out []batchGroup
	for lo := 0; lo < len(g.cands); lo += size {
		hi := min(lo+size, len(g.cands))
		out = append(out, batchGroup{method: g.method, tok: g.tok, cands: g.cands[lo:hi]})
	}
	return out
}
