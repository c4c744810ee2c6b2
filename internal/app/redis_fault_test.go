package app_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// ownRedisServer starts an empty redis-server without persistence on a
// free port, for tests that flush or kill it. Without the binary the test
// is skipped, except under CI, which has it.
func ownRedisServer(t *testing.T) (addr string, kill func()) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis-server is not installed but CI is set: %v", err)
		}
		t.Skip("redis-server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill = func() { once.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) }
	t.Cleanup(kill)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if !testkit.WaitFor(5*time.Second, 10*time.Millisecond, func() bool { return c.Ping(context.Background()).Err() == nil }) {
		t.Fatalf("redis-server on %s did not start", addr)
	}
	return addr, kill
}

// twoNodesOnOwnRedis starts two gateway processes on a fresh PostgreSQL
// schema and a redis-server of the test's own.
func twoNodesOnOwnRedis(t *testing.T) (nodes []*gateway, st store.Store, rdb *redis.Client) {
	t.Helper()
	pg := os.Getenv("TURNPIKE_TEST_POSTGRES")
	if pg == "" {
		t.Skip("set TURNPIKE_TEST_POSTGRES to run gateway processes on one database and Redis")
	}
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	addr, _ := ownRedisServer(t)
	dsn := freshPostgresSchema(t, pg)
	bin := buildGateway(t)
	up := delayedUpstream(t)
	dir := t.TempDir()
	cfgPath := writeCrashConfig(t, dir, filepath.Join(dir, "unused.db"), up.URL)
	env := []string{"TURNPIKE_DATABASE=" + dsn, "TURNPIKE_REDIS=redis://" + addr + "/0"}
	nodes = []*gateway{startGateway(t, bin, cfgPath, env...), startGateway(t, bin, cfgPath, env...)}
	st, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rdb = redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	return nodes, st, rdb
}

// answered sends calls on key to url from 8 callers until stop closes and
// counts the answers by status; onAnswer runs after each 200.
type answered struct {
	// refused counts answers that ran out of quota (402): a small key
	// does under this load, and that is a right answer, not a fault.
	ok, unavailable, refused, other atomic.Int64
	// lastOther is the status and body of the last answer that was
	// neither, for the failure message.
	lastOther atomic.Value
	wg        sync.WaitGroup
}

func (a *answered) drive(url, key string, stop <-chan struct{}, onAnswer func()) {
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range 8 {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"model":"m","max_tokens":500,"messages":[{"role":"user","content":"hi %d %d"}]}`, w, i)
				req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					return // the node was killed under this call
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case 200:
					a.ok.Add(1)
					if onAnswer != nil {
						onAnswer()
					}
				case 503:
					a.unavailable.Add(1)
				case 402:
					a.refused.Add(1)
				default:
					a.other.Add(1)
					a.lastOther.Store(fmt.Sprintf("%d %s", resp.StatusCode, raw))
				}
			}
		}()
	}
}

// A node is killed (SIGKILL) the instant it has answered a call, before
// its writer stored the settle. The other node's sweep writes every
// answered call's usage row from the Redis journal: the key is charged for
// exactly the calls the client received, and the books stay exact.
func TestNodeKilledRightAfterAnsweringStillChargesWhatItAnswered(t *testing.T) {
	nodes, st, _ := twoNodesOnOwnRedis(t)
	var load answered
	stop := make(chan struct{})
	var killOnce sync.Once
	killed := make(chan struct{})
	load.drive(nodes[0].url, "sk-crash-bob-limited", stop, func() {
		if load.ok.Load() >= 20 {
			killOnce.Do(func() { nodes[0].kill(); close(killed) })
		}
	})
	select {
	case <-killed:
	case <-time.After(20 * time.Second):
		t.Fatal("the node never answered 20 calls")
	}
	close(stop)
	load.wg.Wait()
	if load.other.Load() != 0 {
		t.Fatalf("%d answers were neither 200, 402 nor 503 (last: %v)", load.other.Load(), load.lastOther.Load())
	}
	waitNoOpenHolds(t, st, 15*time.Second)
	ctx := context.Background()
	bob, err := st.Users().GetByUsername(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	key, err := st.Tokens().GetByName(ctx, bob.ID, "bob-limited")
	if err != nil {
		t.Fatal(err)
	}
	// Every answer the client received is charged. A call settled as its
	// answer was being written may be charged without the client having
	// read it: at most one per other caller.
	rows := int64(len(allLogs(t, st, store.LogFilter{UserID: bob.ID, TokenID: key.ID, Type: store.LogConsume})))
	if ok := load.ok.Load(); rows < ok || rows > ok+7 {
		t.Fatalf("the client received %d answers; %d consume rows were written", ok, rows)
	}
	testkit.WaitFor(5*time.Second, 50*time.Millisecond, func() bool {
		u, err := st.Users().Get(ctx, bob.ID)
		return err == nil && adminQuota(t, nodes[1].url, fmt.Sprintf("/api/users/%d", bob.ID)) == u.Quota
	})
	checkBooks(t, st, nodes[1].url)
	nodes[1].stop(t)
}

// Redis is flushed twice under load on two nodes (a kill and an empty
// restart are covered in the billing package). Every refusal during the
// faults is a 503, never a 500, and afterwards both nodes' live balances equal the ledger and the
// usage rows, to the unit, for every user and key.
func TestRedisFlushedUnderLoadOnTwoNodesKeepsTheBooksExact(t *testing.T) {
	nodes, st, rdb := twoNodesOnOwnRedis(t)
	var a, b answered
	stop := make(chan struct{})
	a.drive(nodes[0].url, "sk-crash-bob-limited", stop, nil)
	b.drive(nodes[1].url, "sk-crash-alice-small", stop, nil)
	for range 2 {
		time.Sleep(700 * time.Millisecond)
		if err := rdb.FlushAll(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	a.wg.Wait()
	b.wg.Wait()
	if a.other.Load()+b.other.Load() != 0 {
		t.Fatalf("%d answers were neither 200, 402 nor 503 (last: %v %v)", a.other.Load()+b.other.Load(), a.lastOther.Load(), b.lastOther.Load())
	}
	if a.ok.Load() == 0 || b.ok.Load() == 0 {
		t.Fatal("the load was not served")
	}
	waitNoOpenHolds(t, st, 10*time.Second)
	for _, n := range nodes {
		checkBooks(t, st, n.url)
	}
	t.Logf("answered %d, refused with 503 %d", a.ok.Load()+b.ok.Load(), a.unavailable.Load()+b.unavailable.Load())
}
