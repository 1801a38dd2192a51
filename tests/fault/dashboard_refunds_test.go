package fault

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/internal/testdb"
)

// Issue 23 in a real Chromium against the real binary and its devnet, on both databases, found
// by role and accessible name, axe-core and the CSP checked on every page:
//   - the owner sets the payout policy (approval threshold, no cooling-off, the overpayment
//     offer) and the address book (add, remove);
//   - a payment overpaid on the devnet shows "Refund the overpaid amount"; the refund made is
//     exactly the excess units; the customer claims it on the claim page with a wallet (an
//     EIP-6963 provider signing with the paying devnet key) and it is paid on chain;
//   - a refund whose customer types an address waits for an approval; a withdrawal above the
//     threshold too; the owner, who created both, sees Approve off and why; a second admin
//     approves both on the Approvals page and both are paid; the owner rejects another
//     withdrawal of theirs (a creator may) and cancels an unclaimed refund;
//   - the checkout page of an overpaid payment offers the excess back; its button leads to the
//     claim page, where the paying wallet claims it.
func TestDashboardRefundsAndApprovals(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { dashboardRefunds(t, testdb.URL(t, backend)) })
	}
}

func dashboardRefunds(t *testing.T, db string) {
	w := newRefundsWalk(t, db)
	const payerAccount = 3
	payer := devnetAccountAddr(t, payerAccount)
	overpaid, _ := w.paidPayment(2000, "overpaid-1", payerAccount, 1_500_000) // 1.5 USDC too much
	plain, _ := w.paidPayment(5000, "plain-2", 4, 0)
	owner := w.tab(nil, 1280, 900, "light")
	w.signIn(owner, refundsOwner)

	// The payout policy: approvals above $10, no cooling-off, the overpayment offer on.
	w.visit(owner, "Payout settings", "Payout settings")
	fill(t, owner, "Approval threshold (USD)", "10")
	fill(t, owner, "Cooling-off period (hours)", "0")
	press(t, owner, "checkbox", "Offer overpaying customers the excess back on the checkout page")
	press(t, owner, "button", "Save payout settings")
	waitText(t, owner, "Saved.", 10*time.Second)
	waitText(t, owner, "approvals above $10.00", 10*time.Second)
	waitText(t, owner, "The looser rules apply from", 10*time.Second) // 24 h → 0 waits out the 24 h
	checkPage(t, owner, w.axe, "payout settings saved")
	shot(t, owner, "payout-settings-desktop-light")

	// The address book: two saved, one removed.
	treasury := devnetAccountAddr(t, 6)
	w.visit(owner, "Address book", "Address book")
	for _, e := range [][2]string{{"Old wallet", devnetAccountAddr(t, 7)}, {"Treasury", treasury}} {
		fill(t, owner, "Label", e[0])
		choose(t, owner, "Network", "eip155:1337")
		fill(t, owner, "Address", e[1])
		press(t, owner, "button", "Save address")
		waitText(t, owner, "Saved "+e[0]+": usable", 10*time.Second) // from tomorrow: shortening the cooling-off waits out the 24 h in force
	}
	press(t, owner, "button", "Remove Old wallet")
	press(t, owner, "button", "Yes, remove Old wallet")
	waitJS(t, owner, "Old wallet removed", `!document.querySelector("main table").innerText.includes("Old wallet")`, 10*time.Second)
	checkPage(t, owner, w.axe, "address book")
	shot(t, owner, "address-book-desktop-light")

	// The overpaid payment: exactly the excess refunded, claimed by the paying wallet, paid.
	w.visit(owner, "Payments", "Payments")
	press(t, owner, "link", "Payment overpaid-1")
	waitText(t, owner, "Overpaid by", 15*time.Second)
	press(t, owner, "button", "Refund the overpaid amount")
	if got := fieldValue(t, owner, "Amount (USDC)"); got != "1.5" {
		t.Fatalf("the overpaid refund's amount is %q, want 1.5", got)
	}
	checkPage(t, owner, w.axe, "refund form")
	shot(t, owner, "refund-form-desktop-light")
	press(t, owner, "button", "Review refund")
	waitText(t, owner, "exactly the overpaid amount", 5*time.Second)
	press(t, owner, "button", "Confirm refund")
	if _, err := axNode(owner, "heading", "Refund of 1.5 USDC", 15*time.Second); err != nil {
		t.Fatalf("no refund page: %v\n%s", err, pageText(owner))
	}
	checkPage(t, owner, w.axe, "refund awaiting its address")
	shot(t, owner, "refund-detail-desktop-light")
	claimURL := fieldValue(t, owner, "Claim link")
	rs := w.refundsOf(overpaid)
	if len(rs) != 1 || rs[0]["amountAsset"] != "1500000" || rs[0]["status"] != "awaiting_address" {
		t.Fatalf("the overpaid payment's refunds: %v", rs)
	}
	refund1 := rs[0]["id"].(string)
	customer := w.tab(devnetWallet(t, payerAccount), 390, 844, "dark")
	if err := chromedp.Do(customer, chromedp.Navigate(w.claimPath(claimURL))); err != nil {
		t.Fatal(err)
	}
	waitText(t, customer, "1.50 USDC", 15*time.Second) // the claim page writes it as a price
	checkPage(t, customer, w.axe, "claim page")
	press(t, customer, "button", "Connect Go Test Wallet")
	press(t, customer, "button", "Sign and claim the refund")
	waitText(t, customer, "Claimed.", 15*time.Second)
	done := w.waitAPI("/v1/external/secretkey-auth/refunds/"+refund1, "status", "completed", 90*time.Second)
	if rc, _ := done["receipt"].(map[string]any); rc == nil || rc["settledAmountAsset"] != "1500000" {
		t.Fatalf("the overpaid refund's receipt: %v", done["receipt"])
	}
	if done["recipientAddress"] != payer || done["recipientSource"] != "payer_signature" {
		t.Fatalf("the claimed refund: %v", done)
	}
	waitJS(t, owner, "the refund completed, live", `/\bcompleted\b/.test(document.querySelector("main").innerText)`, 10*time.Second)
	waitText(t, customer, "Sent.", 15*time.Second)

	// A refund of $2 whose customer types an address: it waits for an approval.
	w.open(owner, "#/payments/"+plain, "Payment plain-2")
	press(t, owner, "button", "Refund")
	fill(t, owner, "Amount (USD)", "2")
	fill(t, owner, "Reason (optional)", "Returned a loaf")
	press(t, owner, "button", "Review refund")
	press(t, owner, "button", "Confirm refund")
	if _, err := axNode(owner, "heading", "Refund of 2 USDC", 15*time.Second); err != nil {
		t.Fatalf("no refund page: %v\n%s", err, pageText(owner))
	}
	typedRefund := w.refundsOf(plain)[0]
	plainTab := w.tab(nil, 390, 844, "light")
	if err := chromedp.Do(plainTab, chromedp.Navigate(w.claimPath(fieldValue(t, owner, "Claim link")))); err != nil {
		t.Fatal(err)
	}
	typedAddr := devnetAccountAddr(t, 8)
	fill(t, plainTab, "Address to receive the refund", typedAddr)
	press(t, plainTab, "button", "Claim to this address")
	waitText(t, plainTab, "approves the refund", 15*time.Second)
	checkPage(t, plainTab, w.axe, "claim page after a typed address")

	// Two withdrawals above the threshold, both the owner's: one to the saved Treasury.
	withdraw := func(amount string) string {
		w.visit(owner, "Withdrawals", "Withdrawals")
		press(t, owner, "link", "New withdrawal")
		fill(t, owner, "Amount (USD)", amount)
		choose(t, owner, "Network", "eip155:1337")
		choose(t, owner, "Saved recipient", treasury)
		if got := fieldValue(t, owner, "Recipient address"); got != treasury {
			t.Fatalf("the saved recipient filled %q", got)
		}
		press(t, owner, "button", "Review")
		waitText(t, owner, "above the approval threshold", 10*time.Second)
		waitText(t, owner, "To Treasury (address book).", 5*time.Second)
		checkPage(t, owner, w.axe, "withdrawal review with the policy's notes")
		shot(t, owner, "withdrawal-review-desktop-light")
		press(t, owner, "button", "Confirm withdrawal")
		waitText(t, owner, "Waiting for approval", 15*time.Second)
		return strings.TrimPrefix(strings.SplitN(mustEval(t, owner, `location.hash`), "?", 2)[0], "#/withdrawals/")
	}
	wd1 := withdraw("15")
	if !disabled(t, owner, "Approve withdrawal "+wd1) {
		t.Fatal("the creator may press Approve on their own withdrawal")
	}
	waitText(t, owner, "You created this withdrawal, so a second person with the admin or owner role must approve it", 5*time.Second)
	checkPage(t, owner, w.axe, "withdrawal waiting for approval")
	wd2 := withdraw("12")

	// The owner's Approvals: both withdrawals and the refund, Approve off; the owner rejects one.
	w.visit(owner, "Approvals", "Approvals")
	for _, name := range []string{"Approve withdrawal " + wd1, "Approve withdrawal " + wd2, "Approve refund " + typedRefund["id"].(string)} {
		if !disabled(t, owner, name) {
			t.Fatalf("%q is on for its creator", name)
		}
	}
	waitText(t, owner, "address typed by the customer", 5*time.Second)
	checkPage(t, owner, w.axe, "approvals of their creator")
	shot(t, owner, "approvals-creator-desktop-light")
	press(t, owner, "button", "Reject withdrawal "+wd2)
	press(t, owner, "button", "Yes, reject withdrawal "+wd2)
	w.waitAPI("/v1/external/secretkey-auth/withdrawals/"+wd2, "status", "cancelled", 15*time.Second)
	gone(t, owner, "button", "Approve withdrawal "+wd2)

	// A second admin approves the withdrawal and the typed-address refund: both are paid.
	admin := w.tab(nil, 390, 844, "dark")
	w.signIn(admin, refundsAdmin)
	press(t, admin, "button", "Menu")
	w.visit(admin, "Approvals", "Approvals")
	press(t, admin, "button", "Approve withdrawal "+wd1)
	gone(t, admin, "button", "Approve withdrawal "+wd1)
	press(t, admin, "button", "Approve refund "+typedRefund["id"].(string))
	waitText(t, admin, "No withdrawals wait for an approval.", 15*time.Second)
	waitText(t, admin, "No refunds wait for an approval.", 15*time.Second)
	checkPage(t, admin, w.axe, "approvals, all approved (phone, dark)")
	shot(t, admin, "approvals-done-phone-dark")
	approved := w.waitAPI("/v1/external/secretkey-auth/withdrawals/"+wd1, "status", "completed", 90*time.Second)
	if a := approved["approval"].(map[string]any); a["approvedBy"] != refundsAdmin {
		t.Fatalf("the withdrawal's approval: %v", a)
	}
	w.waitAPI("/v1/external/secretkey-auth/refunds/"+typedRefund["id"].(string), "status", "completed", 90*time.Second)

	// Refunds: the list and its filter; an unclaimed refund cancelled.
	w.open(owner, "#/payments/"+plain, "Payment plain-2")
	press(t, owner, "button", "Refund")
	fill(t, owner, "Amount (USD)", "1")
	press(t, owner, "button", "Review refund")
	press(t, owner, "button", "Confirm refund")
	press(t, owner, "button", "Cancel refund")
	press(t, owner, "button", "Yes, cancel it")
	waitJS(t, owner, "the refund cancelled", `/\bcancelled\b/.test(document.querySelector("main").innerText)`, 10*time.Second)
	w.visit(owner, "Refunds", "Refunds")
	choose(t, owner, "Status", "completed")
	waitJS(t, owner, "two completed refunds", `document.querySelectorAll("main tbody tr").length === 2`, 10*time.Second)
	checkPage(t, owner, w.axe, "refunds list")
	shot(t, owner, "refunds-desktop-light")

	// The checkout page of an overpaid payment offers the excess back; the wallet claims it.
	third, payURL := w.paidPayment(1000, "overpaid-3", payerAccount, 250_000)
	if err := chromedp.Do(customer, chromedp.Navigate("about:blank"), chromedp.Navigate(payURL)); err != nil {
		t.Fatal(err)
	}
	waitText(t, customer, "You sent 0.25 USDC more than was due", 15*time.Second)
	checkPage(t, customer, w.axe, "checkout page offering the overpaid amount back")
	shot(t, customer, "checkout-overpaid-phone-dark")
	press(t, customer, "button", "Get the overpaid amount back")
	waitText(t, customer, "0.25 USDC", 15*time.Second)
	press(t, customer, "button", "Connect Go Test Wallet")
	press(t, customer, "button", "Sign and claim the refund")
	waitText(t, customer, "Claimed.", 15*time.Second)
	rs = w.refundsOf(third)
	if len(rs) != 1 || rs[0]["amountAsset"] != "250000" || rs[0]["recipientAddress"] != payer {
		t.Fatalf("the checkout's overpayment refund: %v", rs)
	}
	w.waitAPI("/v1/external/secretkey-auth/refunds/"+rs[0]["id"].(string), "status", "completed", 90*time.Second)
}

func mustEval(t *testing.T, ctx chromedpCtx, expr string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
