package refunds

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/recipients"
	"github.com/paymentsd/paymentsd/store"
)

// The customer's side of a refund: the claim page opens it by its secret, shows it, and gives it
// an address — proven by a signature of an address that paid (accepted at once), or typed
// (recorded, and left for a team member's approval).

// ClaimView is a refund as its claim page shows it.
type ClaimView struct {
	Refund   domain.Refund
	Merchant domain.Merchant
	Payers   []string // lowercase addresses that paid the payment
}

// OpenClaim reads refund rawID by its claim secret. An unknown refund and a wrong secret are the
// same ErrRefundNotFound; the secret is compared (in constant time) before anything is read.
func (s *Service) OpenClaim(ctx context.Context, rawID, secret string) (domain.Refund, error) {
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return domain.Refund{}, domain.ErrInvalidRefundSecret
	}
	id, err := uuid.Parse(rawID)
	if err != nil || s.Claims == nil || !s.Claims.Valid(id, secret) {
		return domain.Refund{}, domain.ErrRefundNotFound
	}
	r, err := s.Store.Read(ctx).RefundByID(id, s.Catalog)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Refund{}, domain.ErrRefundNotFound
	}
	return r, err
}

// View builds the claim page's view of an opened refund.
func (s *Service) View(ctx context.Context, r domain.Refund) (ClaimView, error) {
	rd := s.Store.Read(ctx)
	m, err := rd.GetMerchant(r.MerchantID)
	if err != nil {
		return ClaimView{}, err
	}
	payers, err := s.payers(rd, r.PaymentID)
	if err != nil {
		return ClaimView{}, err
	}
	return ClaimView{Refund: r, Merchant: m, Payers: payers}, nil
}

// payers lists the addresses that paid the payment — the senders of the transfers its settlement
// counted (store.SettlementSenders: not a late transfer, which anyone can send to a deposit
// address the watcher still follows), and the receipt's sender — lowercase, once each.
func (s *Service) payers(tx *store.Tx, paymentID uuid.UUID) ([]string, error) {
	out := []string{}
	p, err := tx.PaymentByID(paymentID, s.Catalog)
	if err != nil || p.Receipt == nil {
		return out, err
	}
	senders, err := tx.SettlementSenders(paymentID, p.Receipt.Token.ID)
	if err != nil {
		return nil, err
	}
	add := func(a string) {
		a = strings.ToLower(a)
		if common.IsHexAddress(a) && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	for _, a := range senders {
		add(a)
	}
	if p.Receipt.TxSenderAddress != nil {
		add(*p.Receipt.TxSenderAddress)
	}
	return out, nil
}

// Claim gives an opened refund its recipient. With a signature, it must be the refund's typed
// data naming recipient, signed by an address that paid: the refund moves to pending at once
// (an approval only if the merchant's threshold asks for one). Without one, the typed address
// always waits for a team member's approval.
func (s *Service) Claim(ctx context.Context, r domain.Refund, recipientAddress string, signature *string) (domain.Refund, error) {
	recipient, err := recipients.Normalise(recipientAddress)
	if err != nil {
		return domain.Refund{}, err
	}
	source := domain.RecipientTyped
	if signature != nil {
		signer, err := Signer(r.ID, r.Chain.ID, common.HexToAddress(recipient), *signature)
		if err != nil {
			return domain.Refund{}, err
		}
		payers, err := s.payers(s.Store.Read(ctx), r.PaymentID)
		if err != nil {
			return domain.Refund{}, err
		}
		if !slices.Contains(payers, strings.ToLower(signer.Hex())) {
			return domain.Refund{}, errSignature(strings.ToLower(signer.Hex()) + " signed it, and it is not an address that paid this payment")
		}
		source = domain.RecipientFromPayer
	}
	var out domain.Refund
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		m, err := tx.GetMerchant(r.MerchantID)
		if err != nil {
			return err
		}
		m.Mode = r.Mode
		now := s.Now()
		out, err = s.Core.UpdateRefundTx(tx, r.ID, func(r *domain.Refund) error {
			if r.Status == domain.RefundAwaitingAddress && r.ClaimExpiresAt != nil && !now.Before(*r.ClaimExpiresAt) {
				return domain.ErrClaimExpired
			}
			if err := r.TransitionTo(domain.RefundPending); err != nil {
				return err
			}
			if err := s.Recipients.Check(tx, recipient, "a refund"); err != nil {
				return err
			}
			typed := source == domain.RecipientTyped
			d, _, err := s.policy(ctx, tx, m, domain.Outflow{Kind: domain.OutflowRefund, Mode: r.Mode, Cents: r.AmountInCents,
				ChainID: r.Chain.ID, Recipient: recipient, CountsToday: false, TypedAddress: typed, FromCustomer: true})
			if err != nil {
				return err
			}
			r.RecipientAddress, r.RecipientSource = &recipient, &source
			r.Approval.Required = r.Approval.Required || d.ApprovalRequired || typed
			return nil
		})
		if err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: out.MerchantID, Action: audit.RefundClaimed, TargetType: audit.TargetRefund,
			TargetID: out.ID.String(), Details: map[string]any{"recipientAddress": recipient, "recipientSource": string(source),
				"approvalRequired": out.Approval.Required}})
	})
	return out, err
}
