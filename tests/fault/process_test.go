package fault

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The binary under test is built once per test run, without -race, from the module's
// cmd/paymentsd, exactly as an operator would run it.
var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	buildErr  error
	rootDir   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// moduleRoot walks up from the test's working directory to the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

// paymentsdBinary returns the path of a freshly built bin/paymentsd.
func paymentsdBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if rootDir, buildErr = moduleRoot(); buildErr != nil {
			return
		}
		if buildDir, buildErr = os.MkdirTemp("", "paymentsd-fault-bin"); buildErr != nil {
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("go tool not on PATH: %w", err)
			return
		}
		out := filepath.Join(buildDir, "paymentsd")
		cmd := exec.Command(goTool, "build", "-o", out, "./cmd/paymentsd")
		cmd.Dir = rootDir
		if msg, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/paymentsd in %s: %w\n%s", rootDir, err, msg)
			return
		}
		binPath = out
	})
	if buildErr != nil {
		t.Fatalf("building paymentsd: %v", buildErr)
	}
	return binPath
}

// daemonEnv is the environment of every paymentsd invocation: the caller's environment minus
// anything that configures paymentsd, plus the settings the test needs.
func daemonEnv(dbURL string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "DATABASE_URL=") || strings.HasPrefix(kv, "PAYMENTS_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "DATABASE_URL="+dbURL, "PAYMENTS_PRICING=static", "PAYMENTS_NETWORKS=all", "PAYMENTS_DEVNET=off", "PAYMENTS_SERVE_UNWATCHED=true",
		"PAYMENTS_LOG_FORMAT=json", "PAYMENTS_SECRETS_KEY="+strings.Repeat("9e", 32))
}

// runCLI runs a one-shot paymentsd command and returns its stdout; failure ends the test.
func runCLI(t *testing.T, bin, dbURL string, args ...string) []byte {
	t.Helper()
	return runCLIEnv(t, bin, dbURL, nil, args...)
}

// runCLIEnv is runCLI with extra settings.
func runCLIEnv(t *testing.T, bin, dbURL string, extra []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = rootDir
	cmd.Env = append(daemonEnv(dbURL), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("paymentsd %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// freePort asks the kernel for a free loopback port whose next port is free too, and never hands
// out a port (or the port after it) twice in this test process. The port after matters: a devnet
// on PAYMENTS_DEVNET=HOST:PORT serves its second chain on PORT+1, and the kernel gives ports out
// in sequence, so a proxy or a second devnet picked next would otherwise take it (CI saw
// "bind: address already in use" for the L2 chain). A small race with other processes remains
// until the server binds; server.start retries with another port when that happens.
func freePort(t *testing.T) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 200 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("pick a free port: %v", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		next, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+1))
		ln.Close()
		if err != nil {
			continue
		}
		next.Close()
		if portsGiven[port] || portsGiven[port+1] {
			continue
		}
		portsGiven[port], portsGiven[port+1] = true, true
		return port
	}
	t.Fatal("pick a free port: no free pair of loopback ports after 200 tries")
	return 0
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// server is one `paymentsd serve` child process at a time on a fixed database. Its stdout and
// stderr go to one log file that survives restarts.
type server struct {
	t       *testing.T
	bin     string
	dbURL   string
	logPath string
	env     []string // settings on top of daemonEnv's

	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd has exited
	waitErr error
	base    string // http://127.0.0.1:port of the running process
}

// newServer prepares a server; start runs it. The process is stopped at the end of the test,
// and the log's tail is printed when the test failed.
func newServer(t *testing.T, bin, dbURL string) *server {
	s := &server{t: t, bin: bin, dbURL: dbURL, logPath: filepath.Join(t.TempDir(), "paymentsd-serve.log")}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("paymentsd serve log %s (errors and warnings, then the last lines):\n%s", s.logPath, logTail(s.logPath))
		}
	})
	return s
}

// running reports whether the current process has not exited yet.
func (s *server) running() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// start launches `paymentsd serve` on a new free port and returns once GET /readyz answers 200.
func (s *server) start() (readyAt time.Time) {
	s.t.Helper()
	if s.running() {
		s.t.Fatal("server.start: a paymentsd process is still running")
	}
	for attempt := 1; ; attempt++ {
		port := freePort(s.t)
		logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			s.t.Fatal(err)
		}
		fmt.Fprintf(logFile, "=== fault test: paymentsd serve on 127.0.0.1:%d (start %d) at %s ===\n", port, attempt,
			time.Now().Format(time.RFC3339Nano))
		cmd := exec.Command(s.bin, "serve", "--addr", "127.0.0.1:"+strconv.Itoa(port))
		cmd.Dir = rootDir
		cmd.Env = append(daemonEnv(s.dbURL), s.env...)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			logFile.Close()
			s.t.Fatalf("start paymentsd serve: %v", err)
		}
		logFile.Close() // the child holds its own descriptor
		s.cmd, s.done, s.waitErr = cmd, make(chan struct{}), nil
		s.base = "http://127.0.0.1:" + strconv.Itoa(port)
		go func(done chan struct{}) {
			s.waitErr = cmd.Wait()
			close(done)
		}(s.done)
		readyAt, err := s.waitReady(60 * time.Second)
		if err == nil {
			return readyAt
		}
		if !s.running() && attempt < 3 && strings.Contains(logTail(s.logPath), "address already in use") {
			continue // lost the race for the port: try another
		}
		s.t.Fatalf("paymentsd serve did not become ready: %v\nlog tail:\n%s", err, logTail(s.logPath))
	}
}

// waitReady polls GET /readyz until it answers 200, the process exits, or the timeout passes.
func (s *server) waitReady(timeout time.Duration) (time.Time, error) {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return time.Time{}, fmt.Errorf("process exited: %v", s.waitErr)
		default:
		}
		res, err := client.Get(s.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return time.Now(), nil
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("GET %s/readyz not 200 within %s", s.base, timeout)
}

// kill9 sends SIGKILL to the paymentsd process (no graceful shutdown of any kind) and waits
// until it has exited.
func (s *server) kill9() {
	s.t.Helper()
	if !s.running() {
		s.t.Fatalf("kill -9: paymentsd is not running (exited: %v)", s.waitErr)
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		s.t.Fatalf("kill -9 paymentsd (pid %d): %v", s.cmd.Process.Pid, err)
	}
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.t.Fatalf("paymentsd (pid %d) still running 10s after SIGKILL", s.cmd.Process.Pid)
	}
	var ee *exec.ExitError
	if !errors.As(s.waitErr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		s.t.Fatalf("paymentsd did not die of SIGKILL: %v", s.waitErr)
	}
}

// stop shuts the process down gracefully (SIGTERM), then forcibly if it lingers.
func (s *server) stop() {
	if !s.running() {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return
	case <-time.After(20 * time.Second):
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// logTail returns the log's error and warning lines (at most 15) followed by its last 10 lines.
func logTail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	var problems, last []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if len(line) > 600 {
			line = line[:600] + "…"
		}
		if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, `"level":"WARN"`) ||
			strings.HasPrefix(line, "paymentsd:") || strings.HasPrefix(line, "panic") {
			problems = append(problems, line)
		}
		last = append(last, line)
		if len(last) > 10 {
			last = last[1:]
		}
	}
	if len(problems) > 15 {
		problems = append([]string{fmt.Sprintf("(%d earlier error/warning lines omitted)", len(problems)-15)}, problems[len(problems)-15:]...)
	}
	return "--- errors and warnings ---\n" + strings.Join(problems, "\n") + "\n--- last lines ---\n" + strings.Join(last, "\n")
}
