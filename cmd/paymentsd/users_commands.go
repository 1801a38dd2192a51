package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/people"
)

// The dashboard's people from the command line: users with a role for a merchant, their
// passwords (generated ones are printed once and never stored), and invitations.

func cmdUsersCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("users create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	email := fs.String("email", "", "the user's email (required)")
	merchant := fs.String("merchant", "", "the merchant the user acts for (required)")
	roleFlag := fs.String("role", "", "viewer, developer, admin or owner (required)")
	passwordFile := fs.String("password-file", "", "a file holding the password (else one is generated and printed once)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	mid, role, err := merchantAndRole("users create", *merchant, *roleFlag, stderr)
	if err != nil {
		return err
	}
	password := ""
	if *passwordFile != "" {
		b, err := os.ReadFile(*passwordFile)
		if err != nil {
			return fmt.Errorf("users create: read --password-file: %w", err)
		}
		password = strings.TrimRight(string(b), "\r\n")
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	created, err := a.People.CreateUser(ctx, *email, mid, role, password)
	if err != nil {
		return fmt.Errorf("users create: %w", err)
	}
	out := map[string]any{"userId": created.User.ID, "email": created.User.Email, "merchantId": mid, "role": role}
	if created.Password != "" {
		out["password"] = created.Password
	}
	if *asJSON {
		return printJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "user %s (%s) is %s of merchant %s\n", created.User.Email, created.User.ID, role, mid)
	if created.Password != "" {
		fmt.Fprintf(stdout, "password (shown once): %s\n", created.Password)
	}
	return nil
}

func cmdUsersList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("users list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	merchant := fs.String("merchant", "", "the merchant (required)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	mid, err := uuid.Parse(*merchant)
	if err != nil {
		fmt.Fprintln(stderr, "users list: --merchant must be a merchant id")
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	members, err := a.People.Members(ctx, mid)
	if err != nil {
		return err
	}
	list := make([]map[string]any, len(members))
	for i, m := range members {
		list[i] = map[string]any{"userId": m.User.ID, "email": m.User.Email, "role": m.Role, "disabled": m.User.DisabledAt != nil,
			"createdAt": m.User.CreatedAt}
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"merchantId": mid, "users": list})
	}
	for _, m := range members {
		state := ""
		if m.User.DisabledAt != nil {
			state = " (disabled)"
		}
		fmt.Fprintf(stdout, "%s\t%s\t%s%s\n", m.User.Email, m.Role, m.User.ID, state)
	}
	return nil
}

func cmdUsersDisable(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	email, a, err := userCommand(ctx, "users disable", args, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.People.Disable(ctx, email); err != nil {
		return fmt.Errorf("users disable: %w", err)
	}
	fmt.Fprintf(stdout, "user %s disabled\n", email)
	return nil
}

func cmdUsersResetPassword(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	email, a, err := userCommand(ctx, "users reset-password", args, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	password, err := a.People.ResetPassword(ctx, email)
	if err != nil {
		return fmt.Errorf("users reset-password: %w", err)
	}
	fmt.Fprintf(stdout, "new password for %s (shown once): %s\n", email, password)
	return nil
}

func cmdUsersInvite(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("users invite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	email := fs.String("email", "", "the invitee's email (required)")
	merchant := fs.String("merchant", "", "the merchant to join (required)")
	roleFlag := fs.String("role", "", "viewer, developer, admin or owner (required)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	mid, role, err := merchantAndRole("users invite", *merchant, *roleFlag, stderr)
	if err != nil {
		return err
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	token, inv, err := a.People.Invite(ctx, *email, mid, role)
	if err != nil {
		return fmt.Errorf("users invite: %w", err)
	}
	fmt.Fprintln(stdout, people.InvitationURL(a.Cfg.PublicBaseURL, token))
	fmt.Fprintf(stderr, "a single-use invitation for %s as %s of merchant %s, until %s\n", inv.Email, role, mid, inv.ExpiresAt.Format("2006-01-02 15:04 MST"))
	return nil
}

// userCommand parses the flags of a command on one user (--email) and opens the database.
func userCommand(ctx context.Context, name string, args []string, stderr io.Writer) (string, *app.App, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	email := fs.String("email", "", "the user's email (required)")
	if err := fs.Parse(args); err != nil {
		return "", nil, errUsage
	}
	if *email == "" {
		fmt.Fprintf(stderr, "%s: --email is required\n", name)
		return "", nil, errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return "", nil, err
	}
	return *email, a, nil
}

func merchantAndRole(cmd, merchant, roleName string, stderr io.Writer) (uuid.UUID, domain.Role, error) {
	mid, err := uuid.Parse(merchant)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --merchant must be a merchant id\n", cmd)
		return uuid.Nil, "", errUsage
	}
	role, err := domain.ParseRole(roleName)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --role: %v\n", cmd, err)
		return uuid.Nil, "", errUsage
	}
	return mid, role, nil
}
