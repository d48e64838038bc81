package process

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

func needProc(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reading processes needs Linux's /proc")
	}
}

func TestAliveSelfAndReusedPID(t *testing.T) {
	needProc(t)
	self := Of(os.Getpid())
	if self == nil || self.Start == "" || self.Host != Host() {
		t.Fatalf("Of(self) = %+v", self)
	}
	if alive, known := Alive(self); !alive || !known {
		t.Fatalf("Alive(self) = %v, %v; want alive and known", alive, known)
	}
	// A PID that runs but started at another time is another process: the
	// recorded one is gone, and that is known.
	reused := *self
	reused.Start = "1"
	if alive, known := Alive(&reused); alive || !known {
		t.Fatalf("Alive(reused pid) = %v, %v; want dead and known", alive, known)
	}
	noStart := *self
	noStart.Start = ""
	if alive, known := Alive(&noStart); !alive || known {
		t.Fatalf("Alive(no start) = %v, %v; want alive, not known", alive, known)
	}
	other := *self
	other.Host = Host() + "-elsewhere"
	if _, known := Alive(&other); known {
		t.Fatal("a process on another host is reported as known")
	}
}

func TestAliveKilledChild(t *testing.T) {
	needProc(t)
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := Of(cmd.Process.Pid)
	if alive, known := Alive(p); !alive || !known {
		t.Fatalf("running child: %v, %v", alive, known)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Not yet reaped: a zombie is gone all the same.
	for {
		if alive, known := Alive(p); !alive && known {
			break
		}
		runtime.Gosched()
	}
	if Of(cmd.Process.Pid) != nil {
		t.Error("Of gives a killed, unreaped process")
	}
	_ = cmd.Wait()
	if alive, known := Alive(p); alive || !known {
		t.Fatalf("killed and reaped child: %v, %v; want dead and known", alive, known)
	}
}

func TestClientSkipsShells(t *testing.T) {
	needProc(t)
	if os.Getenv("CKPT_PROCESS_CHILD") == "1" {
		c := Client()
		if c == nil {
			os.Exit(3)
		}
		if c.PID != mustAtoi(os.Getenv("CKPT_PROCESS_WANT")) {
			os.Stdout.WriteString("client " + c.String())
			os.Exit(4)
		}
		os.Exit(0)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// test binary → sh → env → test binary: the client is this process.
	cmd := exec.Command("sh", "-c", "env CKPT_PROCESS_CHILD=1 \"$0\" -test.run '^TestClientSkipsShells$'; exit $?", exe)
	cmd.Env = append(os.Environ(), "CKPT_PROCESS_WANT="+itoa(os.Getpid()))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add("1234 (claude) S 1200 1234 1200 34816 1234 4194560 1 0 0 0 5 3 0 0 20 0 11 0 8812345 123 456")
	f.Add("7 (a) b) (c) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0")
	f.Add("")
	f.Add("12 (x")
	f.Fuzz(func(t *testing.T, line string) {
		st, err := parseStat(line)
		if err != nil {
			return
		}
		if st.start == "" || st.state == 0 {
			t.Fatalf("parsed %q into %+v", line, st)
		}
	})
}

func TestParseStat(t *testing.T) {
	st, err := parseStat("7 (a) b) (c) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0")
	if err != nil || st.comm != "a) b) (c" || st.ppid != 1 || st.start != "99" || st.state != 'R' {
		t.Fatalf("parseStat = %+v, %v", st, err)
	}
	if _, err := parseStat("7 (x) R 1"); err == nil {
		t.Fatal("a short line parsed")
	}
}

var _ ckpt.AliveFunc = Alive

func itoa(n int) string { return strconv.Itoa(n) }

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
