package audit_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	"github.com/paymentsd/paymentsd/audit"
)

// Who is answerable for what a request creates, and who may approve: a person; a key made by a
// person answers to that person but never approves; anything else is nobody.
func TestPersonOfAndCreatorOf(t *testing.T) {
	ann := uuid.New()
	cases := []struct {
		name            string
		actor           *audit.Actor
		person, creator *uuid.UUID
	}{
		{"a signed-in person", &audit.Actor{Kind: audit.KindPerson, ID: ann.String(), Label: "ann@shop.example"}, &ann, &ann},
		{"a key Ann made", &audit.Actor{Kind: audit.KindService, ID: uuid.NewString(), Label: "sk_live_ab", KeyMadeBy: ann.String()}, nil, &ann},
		{"a key the command line made", &audit.Actor{Kind: audit.KindService, ID: uuid.NewString(), Label: "sk_live_cd"}, nil, nil},
		{"a service token", &audit.Actor{Kind: audit.KindService, ID: "client-1"}, nil, nil},
		{"a key naming a malformed maker", &audit.Actor{Kind: audit.KindService, KeyMadeBy: "nope"}, nil, nil},
		{"a person actor whose id is malformed", &audit.Actor{Kind: audit.KindPerson, ID: "nope"}, nil, nil},
		{"the operator, even with a maker set", &audit.Actor{Kind: audit.KindOperator, KeyMadeBy: ann.String()}, nil, nil},
		{"no actor (a worker)", nil, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			if c.actor != nil {
				ctx = audit.WithActor(ctx, *c.actor)
			}
			assert.Equal(t, c.person, audit.PersonOf(ctx))
			assert.Equal(t, c.creator, audit.CreatorOf(ctx))
		})
	}
}
