// Package keyfile keeps a generated secret of the embedded development default in a file beside
// the database (mode 0600), never in the database.
package keyfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LoadOrCreate reads the secret at path, or makes one with generate and writes it there. The
// secret is written to a temporary file and linked into place, which fails if the path exists:
// two processes starting together end up with one secret, and neither reads a half-written file.
func LoadOrCreate(path string, generate func() ([]byte, error)) (secret []byte, created bool, err error) {
	if b, err := os.ReadFile(path); err == nil {
		return b, false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("key file %s: %w", path, err)
	}
	b, err := generate()
	if err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("key file %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".key-*.tmp") // mode 0600
	if err != nil {
		return nil, false, fmt.Errorf("key file %s: %w", path, err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	_, werr := f.Write(b)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return nil, false, fmt.Errorf("key file %s: %w", path, err)
	}
	if err := os.Link(f.Name(), path); errors.Is(err, os.ErrExist) {
		return LoadOrCreate(path, generate) // another process made it first: use its secret
	} else if err != nil {
		return nil, false, fmt.Errorf("key file %s: %w", path, err)
	}
	return b, true, nil
}
