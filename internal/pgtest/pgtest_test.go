package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestClusterServesADatabasePerTest(t *testing.T) {
	c := Start(t, Options{})
	a, b := c.NewDB(t), c.NewDB(t)
	if a == b {
		t.Fatalf("two databases at one address %s", a)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: got %d, %v; want 1", one, err)
	}
}
