// Package catalog is the chain and token catalogue as data: the embedded chains.yaml, optionally
// merged with an operator's file (PAYMENTS_CATALOG_FILE) in the same format, validated, and
// turned into the domain's chains and tokens that the store upserts at start. Adding an EVM chain
// is an entry here (or in the operator's file) and an RPC URL; no code.
package catalog

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/paymentsd/paymentsd/domain"
)

//go:embed chains.yaml
var embedded []byte

// File is a catalogue file: its field names are the API's Chain and Token field names.
type File struct {
	Chains []Chain `yaml:"chains"`
}

// Chain is one chain of the file with its tokens.
type Chain struct {
	ChainID             string  `yaml:"chainId"` // CAIP-2
	Name                string  `yaml:"name"`
	NativeSymbol        string  `yaml:"nativeSymbol"`
	NativeDecimals      int32   `yaml:"nativeDecimals"`
	IsTestnet           bool    `yaml:"isTestnet"`
	IsActive            bool    `yaml:"isActive"` // default true; false stops serving the chain
	Confirmations       int32   `yaml:"confirmations"`
	FinalizedTag        bool    `yaml:"finalizedTag"` // the node's `finalized` block may count as final
	BlockExplorerURL    string  `yaml:"blockExplorerUrl"`
	ConvenienceFeeCents int64   `yaml:"convenienceFeeCents"`
	GaslessFeeCents     int64   `yaml:"gaslessFeeCents"` // the relay fee of a gasless payment when the buyer bears it
	Tokens              []Token `yaml:"tokens"`
}

// Token is one token of a chain.
type Token struct {
	ID              string `yaml:"id"` // CAIP-19
	Symbol          string `yaml:"symbol"`
	ContractAddress string `yaml:"contractAddress"`
	Decimals        int32  `yaml:"decimals"`
	Type            string `yaml:"type"`
	AssetType       string `yaml:"assetType"`
	MarketAPIID     string `yaml:"marketApiId"`
	Status          string `yaml:"status"` // default active
	EIP3009         bool   `yaml:"eip3009"`
	EIP2612         bool   `yaml:"eip2612"`
}

// ErrInvalid is wrapped by every parse and validation failure.
var ErrInvalid = errors.New("catalog: invalid catalogue")

// Embedded is the catalogue this build ships, validated.
func Embedded() (File, error) { return Merge(File{}, embedded, "embedded chains.yaml") }

// Load is the embedded catalogue with the operator's file (when path is not empty) merged over it.
func Load(path string) (File, error) {
	f, err := Embedded()
	if err != nil || path == "" {
		return f, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("catalog: read PAYMENTS_CATALOG_FILE: %w", err)
	}
	return Merge(f, data, path)
}

// Merge parses data (named name in errors) and merges it over base, then validates the result.
// A chain is matched by chainId and a token by id: a new one is added whole (isActive and status
// default to true and active), an existing one takes only the fields the file spells out, the
// others keep base's values. Nothing is removed by a file: a chain is stopped with
// `isActive: false`, a token with `status: deprecated` or `blocked`.
func Merge(base File, data []byte, name string) (File, error) {
	// Strict pass first: an unknown or misspelt field, or a wrong type, is refused, not ignored.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var strict File
	if err := dec.Decode(&strict); err != nil && !errors.Is(err, io.EOF) { // an empty file changes nothing
		return File{}, fmt.Errorf("%w: %s: %w", ErrInvalid, name, err)
	}
	// Node pass: decoding a node onto an existing value sets only the fields it spells out.
	var doc struct {
		Chains []yaml.Node `yaml:"chains"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return File{}, fmt.Errorf("%w: %s: %w", ErrInvalid, name, err)
	}
	out := File{Chains: append([]Chain(nil), base.Chains...)}
	for i, node := range doc.Chains {
		if err := out.mergeChain(&node); err != nil {
			return File{}, fmt.Errorf("%w: %s: chain %d: %w", ErrInvalid, name, i+1, err)
		}
	}
	if err := out.Validate(); err != nil {
		return File{}, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

func (f *File) mergeChain(node *yaml.Node) error {
	var head struct {
		ChainID string      `yaml:"chainId"`
		Tokens  []yaml.Node `yaml:"tokens"`
	}
	if err := node.Decode(&head); err != nil {
		return err
	}
	if head.ChainID == "" {
		return errors.New("chainId is required")
	}
	at := -1
	c := Chain{IsActive: true}
	for i, b := range f.Chains {
		if b.ChainID == head.ChainID {
			at, c = i, b
		}
	}
	tokens := append([]Token(nil), c.Tokens...)
	if err := node.Decode(&c); err != nil {
		return err
	}
	c.Tokens = tokens
	for j := range head.Tokens {
		if err := c.mergeToken(&head.Tokens[j]); err != nil {
			return fmt.Errorf("%s token %d: %w", head.ChainID, j+1, err)
		}
	}
	if at < 0 {
		f.Chains = append(f.Chains, c)
	} else {
		f.Chains[at] = c
	}
	return nil
}

func (c *Chain) mergeToken(node *yaml.Node) error {
	var head struct {
		ID string `yaml:"id"`
	}
	if err := node.Decode(&head); err != nil {
		return err
	}
	if head.ID == "" {
		return errors.New("id is required")
	}
	for i := range c.Tokens {
		if c.Tokens[i].ID == head.ID {
			return node.Decode(&c.Tokens[i])
		}
	}
	t := Token{Status: string(domain.TokenActive)}
	if err := node.Decode(&t); err != nil {
		return err
	}
	c.Tokens = append(c.Tokens, t)
	return nil
}
