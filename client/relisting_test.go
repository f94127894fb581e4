package client

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// From a server's tools/list_changed until the re-list that follows has
// completed, Relisting reports the server; the event of the re-list comes
// after Relisting turned false, so a caller woken by it sees it done.
func TestRelistingFromNoticeToListing(t *testing.T) {
	var hold atomic.Pointer[chan struct{}] // when set, tools/list waits until it is closed
	listing := make(chan struct{}, 1)
	srv, dial := listingServer(func(ctx context.Context) error {
		if h := hold.Load(); h != nil {
			select {
			case listing <- struct{}{}:
			default:
			}
			select {
			case <-*h:
			case <-ctx.Done():
			}
		}
		return nil
	})
	m := New([]Spec{{Name: "s", Dial: dial}}, Options{RelistInterval: time.Millisecond})
	defer m.Close()
	events, unsub := m.Subscribe()
	defer unsub()
	m.Start(context.Background())
	if m.Relisting("s") || m.Relisting("no-such-server") {
		t.Fatal("a re-list is pending before any notification")
	}

	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	hold.Store(&release)
	srv.Load().AddTool(&mcp.Tool{Name: "added", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	select {
	case <-listing:
	case <-time.After(20 * time.Second):
		t.Fatal("the server's tools/list_changed was never followed by a re-list")
	}
	if !m.Relisting("s") {
		t.Error("while the re-list is under way, Relisting reports nothing pending")
	}
	close(release)
	waitFor(t, events, func(e Event) bool { return e.Kind == EventTools })
	if m.Relisting("s") {
		t.Error("after the re-list was published, Relisting still reports it pending")
	}
}

// A re-list that fails once (here the server answers tools/list with an
// error) is asked for again, so one transient failure does not leave the
// server's calls waiting for a listing nobody asks for any more.
func TestAFailedRelistIsAskedAgain(t *testing.T) {
	var failNext atomic.Int32 // tools/list answers that fail before one goes through
	srv, dial := listingServer(func(context.Context) error {
		if failNext.Load() > 0 {
			failNext.Add(-1)
			return errors.New("listing failed for the test")
		}
		return nil
	})
	m := New([]Spec{{Name: "s", Dial: dial}}, Options{RelistInterval: time.Millisecond})
	defer m.Close()
	events, unsub := m.Subscribe()
	defer unsub()
	m.Start(context.Background()) // returns once the first listing is in

	failNext.Store(1)
	srv.Load().AddTool(&mcp.Tool{Name: "added", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	waitFor(t, events, func(e Event) bool { return e.Kind == EventTools })
	if m.Relisting("s") || failNext.Load() != 0 {
		t.Fatalf("after a failed re-list: pending %v, failures left %d; want it listed again", m.Relisting("s"), failNext.Load())
	}
	if _, ok := m.Tool("s", "added"); !ok {
		t.Fatal("the tool the server added was never listed")
	}
}

// listingServer dials the test server in memory; before each tools/list it
// answers, onList runs, and an error it returns is the listing's answer.
// The server last dialled is kept, for the test to add tools to.
func listingServer(onList func(context.Context) error) (*atomic.Pointer[mcp.Server], func(context.Context) (mcp.Transport, error)) {
	srv := new(atomic.Pointer[mcp.Server])
	return srv, func(ctx context.Context) (mcp.Transport, error) {
		s := newTestServer().build()
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" {
					if err := onList(ctx); err != nil {
						return nil, err
					}
				}
				return next(ctx, method, req)
			}
		})
		srv.Store(s)
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
}
