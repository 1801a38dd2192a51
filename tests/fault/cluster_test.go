package fault

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/glebarez/go-sqlite"  // database/sql driver "sqlite": the outage lock and the checks
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx": the checks
)

// pgCluster is a private PostgreSQL cluster owned by the test: the outage scenario stops it,
// so the shared cluster of $DATABASE_URL is never used. It follows scripts/with-postgres.sh.
type pgCluster struct {
	t       *testing.T
	binDir  string // /usr/lib/postgresql/<major>/bin
	dir     string // cluster directory: data, log, unix socket
	data    string
	logPath string
	port    int
	asPG    bool // running as root: every server tool runs as the postgres user
}

// findPGBin returns the bin directory of the newest /usr/lib/postgresql/<version>/bin/initdb.
func findPGBin() string {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	best, bestVer := "", []int(nil)
	for _, m := range matches {
		if st, err := os.Stat(m); err != nil || st.Mode()&0o111 == 0 {
			continue
		}
		ver := versionOf(filepath.Base(filepath.Dir(filepath.Dir(m))))
		if best == "" || lessVersion(bestVer, ver) {
			best, bestVer = filepath.Dir(m), ver
		}
	}
	return best
}

// versionOf parses "15" or "9.6" into its numeric parts; anything unparsable counts as 0.
func versionOf(s string) []int {
	var v []int
	for _, p := range strings.Split(s, ".") {
		n, _ := strconv.Atoi(p)
		v = append(v, n)
	}
	return v
}

func lessVersion(a, b []int) bool {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// newPGCluster initialises and starts a cluster on a free loopback port; it is stopped and
// removed when the test ends. Without server binaries the test is skipped locally and fails
// under CI, so CI can never pass without having run the PostgreSQL scenarios.
func newPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	binDir := findPGBin()
	if binDir == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no /usr/lib/postgresql/*/bin/initdb under CI: the PostgreSQL fault scenarios must run (apt-get install -y postgresql)")
		}
		t.Skip("no /usr/lib/postgresql/*/bin/initdb: skipping the PostgreSQL fault scenarios")
	}
	for _, tool := range []string{"initdb", "pg_ctl", "createdb"} {
		if _, err := os.Stat(filepath.Join(binDir, tool)); err != nil {
			t.Fatalf("PostgreSQL tool missing: %v", err)
		}
	}
	// /tmp, not $TMPDIR: the postgres user must reach it, and the socket path must stay short.
	dir, err := os.MkdirTemp("/tmp", "pgfault")
	if err != nil {
		t.Fatal(err)
	}
	c := &pgCluster{t: t, binDir: binDir, dir: dir, data: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "log"),
		asPG: os.Geteuid() == 0}
	started := false
	t.Cleanup(func() {
		if started {
			if out, err := c.run(60*time.Second, "pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop"); err != nil {
				t.Logf("stopping the PostgreSQL cluster: %v\n%s", err, out)
			}
		}
		if t.Failed() {
			if b, err := os.ReadFile(c.logPath); err == nil {
				t.Logf("PostgreSQL log (last 3000 bytes):\n%s", tailBytes(b, 3000))
			}
		}
		_ = os.RemoveAll(dir)
	})
	if c.asPG {
		// initdb and postgres refuse to run as root: the cluster belongs to the postgres user.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root but there is no postgres user to own the cluster: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := c.run(120*time.Second, "initdb", "-D", c.data, "-A", "trust", "-U", "postgres", "--no-sync",
		"-E", "UTF8", "--locale=C"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	for attempt := 1; ; attempt++ {
		c.port = freePort(t)
		err := c.start()
		if err == nil {
			break
		}
		_, _ = c.run(60*time.Second, "pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop")
		log, _ := os.ReadFile(c.logPath)
		if attempt < 3 && (strings.Contains(string(log), "could not bind") || strings.Contains(string(log), "already in use")) {
			continue
		}
		t.Fatalf("start PostgreSQL: %v\n%s", err, tailBytes(log, 3000))
	}
	started = true
	return c
}

// run runs one of the cluster's tools, as the postgres user when the test runs as root, from
// the cluster directory (postgres cannot read root's working directory).
func (c *pgCluster) run(timeout time.Duration, tool string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	path := filepath.Join(c.binDir, tool)
	var cmd *exec.Cmd
	if c.asPG {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = c.dir
	return cmd.CombinedOutput()
}

// start starts the cluster on c.port and waits until it accepts connections. fsync and full
// page writes are off for speed: they only protect against the machine crashing, which this
// test never does. synchronous_commit stays on: with it off, an immediate stop (the outage)
// loses commits the server already acknowledged, and the test would blame paymentsd for the
// test's own cluster settings.
func (c *pgCluster) start() error {
	opts := fmt.Sprintf("-p %d -k %s -c fsync=off -c full_page_writes=off "+
		"-c listen_addresses=127.0.0.1 -c max_connections=100", c.port, c.dir)
	out, err := c.run(90*time.Second, "pg_ctl", "-D", c.data, "-w", "-t", "60", "-l", c.logPath, "-o", opts, "start")
	if err != nil {
		return fmt.Errorf("pg_ctl start: %v: %s", err, out)
	}
	return nil
}

// stopImmediate stops the cluster the hard way (no checkpoint, clients cut off), as a crash would.
func (c *pgCluster) stopImmediate() error {
	out, err := c.run(60*time.Second, "pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

// createDB creates a database and returns its URL.
func (c *pgCluster) createDB(name string) string {
	c.t.Helper()
	if out, err := c.run(60*time.Second, "createdb", "-h", "127.0.0.1", "-p", strconv.Itoa(c.port), "-U", "postgres", name); err != nil {
		c.t.Fatalf("createdb %s: %v\n%s", name, err, out)
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, name)
}

// outage stops the cluster for d, then starts it again on the same port. It returns when the
// database went away and when it accepted connections again.
func (c *pgCluster) outage(t *testing.T, d time.Duration) (down, back time.Time) {
	t.Helper()
	if err := c.stopImmediate(); err != nil {
		t.Fatalf("database outage: %v", err)
	}
	down = time.Now()
	time.Sleep(d)
	if err := c.start(); err != nil {
		log, _ := os.ReadFile(c.logPath)
		t.Fatalf("database outage: restarting PostgreSQL: %v\n%s", err, tailBytes(log, 3000))
	}
	return down, time.Now()
}

// sqliteOutage takes SQLite's write lock on the database file for d (BEGIN EXCLUSIVE from a
// second connection), so every write of the server stalls; then commits. SQLite has no server
// to stop: this is its equivalent of the database being unavailable.
func sqliteOutage(t *testing.T, path string, d time.Duration) (down, back time.Time) {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatalf("sqlite outage: open: %v", err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("sqlite outage: connect: %v", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatalf("sqlite outage: BEGIN EXCLUSIVE: %v", err)
	}
	down = time.Now()
	time.Sleep(d)
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatalf("sqlite outage: COMMIT: %v", err)
	}
	return down, time.Now()
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
