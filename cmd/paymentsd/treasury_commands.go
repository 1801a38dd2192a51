package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/treasury"
)

// cmdTreasury prints what merchants are owed and what the wallets hold, per chain and token.
func cmdTreasury(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("treasury", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	clients, dialErrs, closeAll := dialServedChains(ctx, a)
	defer closeAll()
	r, err := treasury.Build(ctx, a.Store, a.Catalog, a.Payments.Prices, clients, dialErrs, a.HotWalletAddress)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, r)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MERCHANT\tNAME\tMODE\tAVAILABLE USD\tPAYOUTS IN FLIGHT USD")
	for _, m := range r.Merchants {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.ID, m.Name, m.Mode, cents(m.AvailableCents), cents(m.PendingPayoutCents))
	}
	fmt.Fprintf(tw, "total\t\tlive\t%s\t%s\n", cents(r.Live.AvailableCents), cents(r.Live.PendingPayoutCents))
	fmt.Fprintf(tw, "total\t\ttest\t%s\t%s\n", cents(r.Test.AvailableCents), cents(r.Test.PendingPayoutCents))
	_ = tw.Flush()
	for _, c := range r.Chains {
		fmt.Fprintf(stdout, "\n%s %s (%s) — hot wallet %s\n", c.Chain, c.Name, c.Mode, orNone(c.HotWallet))
		if c.Error != "" {
			fmt.Fprintf(stdout, "  on-chain figures missing: %s\n", c.Error)
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  TOKEN\tHOT WALLET\tSIGNED, NOT MINED\tUNSWEPT (RECORDED)\tUNSWEPT (ON CHAIN)\tADDRESSES\tSWEPT\tVALUE USD")
		for _, t := range c.Tokens {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", t.Token, orDash(treasury.Units(t.HotWallet, t.Decimals)),
				treasury.Units(t.SignedNotMined, t.Decimals), treasury.Units(t.UnsweptRecorded, t.Decimals),
				orDash(treasury.Units(t.UnsweptOnChain, t.Decimals)), t.UnsweptAddresses, treasury.Units(t.Swept, t.Decimals), orDash(t.ValueUSD))
		}
		_ = tw.Flush()
	}
	fmt.Fprintf(stdout, "\nlive: owed to merchants $%s (available + payouts in flight); held on the live chains read $%s\n",
		cents(r.Live.LiabilitiesCents), r.Live.AssetsUSD)
	fmt.Fprintf(stdout, "test: owed to merchants $%s; held on the test chains read $%s (test money: worth nothing)\n",
		cents(r.Test.LiabilitiesCents), r.Test.AssetsUSD)
	return nil
}

// cmdSweep asks the workers to sweep deposit addresses now, whatever the threshold, and waits
// for them to finish.
func cmdSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	chainFlag := fs.String("chain", "", "the chain to sweep, as CAIP-2 (e.g. eip155:1337); default: every chain served")
	wait := fs.Duration("wait", 5*time.Minute, "how long to wait for the sweeps to be confirmed (0: only ask)")
	asJSON := fs.Bool("json", false, "print one JSON object when done")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	var ids []int64
	for _, c := range a.Catalog.Chains {
		if c.Enabled && (*chainFlag == "" || chains.CAIP2(c.ID) == *chainFlag) {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		fmt.Fprintf(stderr, "sweep: no served chain %q (the chains with an RPC URL or the devnet)\n", *chainFlag)
		return errUsage
	}
	now := app.Now()
	reqs := make([]store.SweepRequest, len(ids))
	if err := a.Store.InTx(ctx, func(tx *store.Tx) error {
		for i, id := range ids {
			reqs[i] = store.SweepRequest{ID: uuid.Must(uuid.NewV7()), ChainID: id, CreatedAt: now}
			if err := tx.InsertSweepRequest(reqs[i]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for _, r := range reqs {
		fmt.Fprintf(stderr, "sweep requested on %s (request %s)\n", chains.CAIP2(r.ChainID), r.ID)
	}
	if *wait <= 0 {
		return nil
	}
	return waitSweeps(ctx, a, reqs, *wait, *asJSON, stdout, stderr)
}

type sweepLine struct {
	Address string `json:"address"`
	Token   string `json:"token"`
	Amount  string `json:"amount,omitempty"` // smallest unit
	Status  string `json:"status"`
	TxHash  string `json:"txHash,omitempty"`
	Error   string `json:"error,omitempty"`
}

type sweepOutcome struct {
	Request uuid.UUID   `json:"request"`
	Chain   string      `json:"chain"`
	Result  string      `json:"result"`
	Sweeps  []sweepLine `json:"sweeps"`
}

// waitSweeps follows the requests until a worker has done them, printing each sweep's moves.
func waitSweeps(ctx context.Context, a *app.App, reqs []store.SweepRequest, wait time.Duration, asJSON bool, stdout, stderr io.Writer) error {
	deadline := time.Now().Add(wait)
	seen := map[string]string{}
	for {
		var out []sweepOutcome
		done, started, refused := 0, 0, false
		for _, r := range reqs {
			cur, err := a.Store.Read(ctx).GetSweepRequest(r.ID)
			if err != nil {
				return err
			}
			o := sweepOutcome{Request: r.ID, Chain: chains.CAIP2(r.ChainID)}
			if o.Sweeps, err = sweepLines(ctx, a, r); err != nil {
				return err
			}
			for _, s := range o.Sweeps {
				key := o.Chain + s.Address + s.Token
				if id := s.Status + s.TxHash; seen[key] != id {
					seen[key] = id
					fmt.Fprintf(stderr, "%s %s %s %s: %s %s\n", o.Chain, s.Address, s.Token, orDash(s.Amount), s.Status, s.TxHash)
				}
			}
			if cur.StartedAt != nil {
				started++
			}
			if cur.DoneAt != nil {
				done++
				o.Result = *cur.Result
				refused = refused || strings.HasPrefix(o.Result, "not swept")
			}
			out = append(out, o)
		}
		if done == len(reqs) {
			for _, o := range out {
				fmt.Fprintf(stderr, "%s: %s\n", o.Chain, o.Result)
			}
			if asJSON {
				if err := printJSON(stdout, map[string]any{"requests": out}); err != nil {
					return err
				}
			}
			if refused {
				return errors.New("a worker could not sweep (see above)")
			}
			return nil
		}
		if time.Now().After(deadline) {
			if started < len(reqs) {
				return fmt.Errorf("no worker took the request up within %s: is `paymentsd serve` (role all or worker) running on this database? "+
					"The request stays and is done when one runs", wait)
			}
			return fmt.Errorf("the sweeps are not all confirmed after %s; the worker goes on (paymentsd treasury shows the state)", wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// sweepLines lists the sweeps of a request's chain since it was made.
func sweepLines(ctx context.Context, a *app.App, r store.SweepRequest) ([]sweepLine, error) {
	sws, err := a.Store.Read(ctx).SweepsSince(r.ChainID, r.CreatedAt)
	if err != nil {
		return nil, err
	}
	var txIDs []uuid.UUID
	for _, s := range sws {
		if s.SweepTxID != nil {
			txIDs = append(txIDs, *s.SweepTxID)
		}
	}
	txs, err := a.Store.Read(ctx).OutgoingTxsByID(txIDs)
	if err != nil {
		return nil, err
	}
	hashes := map[uuid.UUID]string{}
	for _, o := range txs {
		if o.MinedHash != nil {
			hashes[o.ID] = *o.MinedHash
		} else if len(o.Attempts) > 0 {
			hashes[o.ID] = o.Attempts[len(o.Attempts)-1].Hash
		}
	}
	out := make([]sweepLine, 0, len(sws))
	for _, s := range sws {
		l := sweepLine{Address: s.Address, Token: a.Catalog.Tokens[s.TokenID].Symbol, Status: string(s.Status)}
		if s.AmountAsset != nil {
			l.Amount = s.AmountAsset.String()
		}
		if s.SweepTxID != nil {
			l.TxHash = hashes[*s.SweepTxID]
		}
		if s.Error != nil {
			l.Error = *s.Error
		}
		out = append(out, l)
	}
	return out, nil
}

// dialServedChains connects to each served chain for reading balances: PAYMENTS_RPC_URLS, and
// the devnet's URL for the devnet.
func dialServedChains(ctx context.Context, a *app.App) (map[int64]treasury.Chain, map[int64]error, func()) {
	clients, errs := map[int64]treasury.Chain{}, map[int64]error{}
	var opened []*chain.Client
	for _, c := range a.Catalog.Chains {
		if !c.Enabled {
			continue
		}
		urls := a.Cfg.Chains.RPCURLs[c.ID]
		if len(urls) == 0 && devnet.IsDevnet(c.ID) {
			u, err := devnetURL(c.ID, "")
			if err != nil {
				errs[c.ID] = err
				continue
			}
			urls = []string{u}
		}
		if len(urls) == 0 {
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		cl, err := chain.Dial(dctx, c.ID, urls, chain.Options{Timeout: a.Cfg.Chains.RPCTimeout, Logger: a.Log})
		cancel()
		if err != nil {
			errs[c.ID] = err
			continue
		}
		opened = append(opened, cl)
		clients[c.ID] = cl
	}
	return clients, errs, func() {
		for _, c := range opened {
			c.Close()
		}
	}
}

func cents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none (withdrawals wait for a key)"
	}
	return s
}
