package servercli

import (
	"context"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/pgstore"
	"github.com/ckpt-dev/ckpt/remote"
)

// TokenOptions are the inputs of `ckpt token create|ls|revoke`.
type TokenOptions struct {
	IO  cmdutil.IOStreams
	Now func() time.Time
	// Tokens opens where the tokens are: the server's API (admin token)
	// when the store is a URL, else the token file.
	Tokens func() (tokenAdmin, error)
	JSON   bool
	// create
	Scope, Prefix, Agent, Note string
	ReadPrefix                 bool
	TTL                        time.Duration
}

// tokenAdmin manages tokens, locally (the file) or through a server.
type tokenAdmin interface {
	create(ctx context.Context, in httpapi.TokenInfo, now time.Time) (httpapi.TokenInfo, error)
	list(ctx context.Context) ([]httpapi.TokenInfo, error)
	revoke(ctx context.Context, id string) error
	where() string
}

func newTokenCmd(f *cmdutil.Factory) *cobra.Command {
	var file string
	o := &TokenOptions{IO: f.Env.IOStreams}
	open := func() (tokenAdmin, error) {
		if u := f.Location(); httpapi.IsURL(u) && file == "" {
			st, err := remote.New(u, remote.Options{Token: f.Env.Var(cmdutil.EnvToken)})
			if err != nil {
				return nil, err
			}
			return serverTokens{st}, nil
		}
		if u := f.Location(); pgstore.IsURL(u) && file == "" {
			pt, err := server.OpenPGTokens(context.Background(), u)
			if err != nil {
				return nil, err
			}
			return storedTokens{pt, pt.Where()}, nil
		}
		path := file
		if path == "" {
			st, err := cli.OpenFileStore(f)
			if err != nil {
				return nil, fmt.Errorf("%w (a server over PostgreSQL keeps its tokens in the database: set CKPT_STORE to its postgres:// URL, or pass the server's --tokens FILE)", err)
			}
			path = filepath.Join(st.Dir(), server.TokenFileName)
			st.Close()
		}
		ft, err := server.OpenFileTokens(path)
		if err != nil {
			return nil, err
		}
		return storedTokens{ft, ft.Path()}, nil
	}
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke the tokens of ckpt serve",
		Long: `Manage the bearer tokens ckpt serve accepts. A token is an ID plus a random
secret; only a hash of the secret is kept, so a token is shown once, when it
is created. Its scope is read (everything readable), write (also record
work and run resume, takeover, restart, restore) or admin (also delete,
and manage tokens). --prefix limits its writes to checkpoints under a path
prefix (team-a means team-a/…, never team-ab/…), and with --read-prefix
its reading too; --agent makes the server record that agent as the actor
of its writes, whatever the client says; --ttl makes it expire.

The tokens are those of the local store (tokens.json in its directory), of
--tokens FILE, of a server over PostgreSQL (in its database, when
CKPT_STORE is its postgres:// URL), or, when CKPT_STORE is a server's URL,
that server's, managed through its API with an admin CKPT_TOKEN.
A revoked or expired token is refused from the next request on, and its
open change-feed and dashboard streams end.`,
		Example: `  ckpt token create --scope write --prefix kai-7/ --agent kai-7 --note "kai-7 on build-3"
  ckpt token ls
  ckpt token revoke 3f9c01ab22de`,
	}
	cmd.PersistentFlags().StringVar(&file, "tokens", "", "the token `FILE` of a server (default: tokens.json in the store directory)")
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a token and print it (the only time it is shown)",
		Args:  cmdutil.ExactArgs(0, "no arguments"),
	}
	create.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.Now, o.Tokens = f.Now, open
		return runTokenCreate(ctx, o)
	})
	create.Flags().StringVar(&o.Scope, "scope", "", "read, write or admin (required)")
	create.Flags().StringVar(&o.Prefix, "prefix", "", "write only checkpoints whose ID starts with `PREFIX` (e.g. kai-7/)")
	create.Flags().StringVar(&o.Agent, "agent", "", "record `AGENT` as the actor of every write made with the token")
	create.Flags().StringVar(&o.Note, "note", "", "what the token is for (shown by ls)")
	create.Flags().BoolVar(&o.ReadPrefix, "read-prefix", false, "read only checkpoints under --prefix too (tenants that must not see each other)")
	create.Flags().DurationVar(&o.TTL, "ttl", 0, "the token expires `DURATION` after it is made (e.g. 24h, 90m; default: never)")
	create.Flags().BoolVar(&o.JSON, "json", false, "print the token as JSON")
	ls := &cobra.Command{Use: "ls", Short: "List the tokens (never their secrets)", Args: cmdutil.ExactArgs(0, "no arguments")}
	ls.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.Tokens = open
		return runTokenList(ctx, o)
	})
	ls.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	revoke := &cobra.Command{Use: "revoke ID", Short: "Revoke a token: refused from the next request on", Args: cmdutil.ExactArgs(1, "the token's ID (ckpt token ls)")}
	revoke.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.Tokens = open
		return runTokenRevoke(ctx, o, args[0])
	})
	cmd.AddCommand(create, ls, revoke)
	return cmd
}

func runTokenCreate(ctx context.Context, o *TokenOptions) error {
	if o.Scope == "" {
		return cmdutil.Usagef("give the token's scope: --scope read, write or admin")
	}
	if _, err := server.ParseScope(o.Scope); err != nil {
		return cmdutil.UsageError(err)
	}
	ta, err := o.Tokens()
	if err != nil {
		return err
	}
	in := httpapi.TokenInfo{Scope: o.Scope, Prefix: o.Prefix, Agent: o.Agent, Note: o.Note, ReadPrefix: o.ReadPrefix}
	if o.TTL < 0 {
		return cmdutil.Usagef("--ttl %v is negative: give how long the token lasts, like 24h", o.TTL)
	}
	if o.TTL > 0 {
		in.TTL = o.TTL.String()
	}
	t, err := ta.create(ctx, in, o.Now())
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.WriteJSON(o.IO.Out, t)
	}
	fmt.Fprintf(o.IO.ErrOut, "created token %s (%s) in %s; it is shown only now:\n", t.ID, describeGrant(t), ta.where())
	_, err = fmt.Fprintln(o.IO.Out, t.Token)
	return err
}

func describeGrant(t httpapi.TokenInfo) string {
	s := "scope " + t.Scope
	if t.Prefix != "" {
		s += ", writes under " + t.Prefix
	}
	if t.ReadPrefix {
		s += ", reads only under " + t.Prefix
	}
	if t.Agent != "" {
		s += ", acts as " + t.Agent
	}
	if !t.ExpiresAt.IsZero() {
		s += ", expires " + t.ExpiresAt.Format(time.RFC3339)
	}
	return s
}

func runTokenList(ctx context.Context, o *TokenOptions) error {
	ta, err := o.Tokens()
	if err != nil {
		return err
	}
	list, err := ta.list(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		if list == nil {
			list = []httpapi.TokenInfo{}
		}
		return cmdutil.WriteJSON(o.IO.Out, list)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(o.IO.Out, "no tokens in %s (ckpt serve makes an admin token on its first start)\n", ta.where())
		return err
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSCOPE\tPREFIX\tAGENT\tCREATED\tEXPIRES\tNOTE")
	for _, t := range list {
		prefix, expires := render.Dash(t.Prefix), "-"
		if t.ReadPrefix {
			prefix += " (read too)"
		}
		if !t.ExpiresAt.IsZero() {
			expires = t.ExpiresAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Scope, prefix, render.Dash(t.Agent), t.CreatedAt.Format(time.RFC3339), expires, t.Note)
	}
	return tw.Flush()
}

func runTokenRevoke(ctx context.Context, o *TokenOptions, id string) error {
	ta, err := o.Tokens()
	if err != nil {
		return err
	}
	if err := ta.revoke(ctx, id); err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.IO.Out, "revoked token %s: the server refuses it from the next request on\n", id)
	return err
}

// storedTokens manages a token store directly: a token file, or the
// database of a server over PostgreSQL.
type storedTokens struct {
	ft    server.TokenStore
	place string
}

func (f storedTokens) create(ctx context.Context, in httpapi.TokenInfo, now time.Time) (httpapi.TokenInfo, error) {
	t, bearer, err := server.NewTokenFrom(in, now)
	if err != nil {
		return httpapi.TokenInfo{}, err
	}
	if err := f.ft.Add(ctx, t); err != nil {
		return httpapi.TokenInfo{}, err
	}
	out := infoOf(t)
	out.Token = bearer
	return out, nil
}

func (f storedTokens) list(ctx context.Context) ([]httpapi.TokenInfo, error) {
	list, err := f.ft.List(ctx)
	out := make([]httpapi.TokenInfo, len(list))
	for i, t := range list {
		out[i] = infoOf(t)
	}
	return out, err
}

func (f storedTokens) revoke(ctx context.Context, id string) error { return f.ft.Revoke(ctx, id) }
func (f storedTokens) where() string                               { return f.place }

func infoOf(t server.Token) httpapi.TokenInfo {
	return server.TokenInfoOf(t)
}

// serverTokens manages a server's tokens through its API.
type serverTokens struct{ st *remote.Store }

func (s serverTokens) create(ctx context.Context, in httpapi.TokenInfo, _ time.Time) (httpapi.TokenInfo, error) {
	return s.st.CreateToken(ctx, in)
}
func (s serverTokens) list(ctx context.Context) ([]httpapi.TokenInfo, error) { return s.st.Tokens(ctx) }
func (s serverTokens) revoke(ctx context.Context, id string) error           { return s.st.RevokeToken(ctx, id) }
func (s serverTokens) where() string                                         { return s.st.URL() }
