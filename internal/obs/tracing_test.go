package obs

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func TestTracingClientSendsTheTraceparentOfItsSpan(t *testing.T) {
	var got string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Get("traceparent") }))
	defer up.Close()
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	on := &Tracer{tp: tp, tracer: tp.Tracer("test"), prop: propagation.TraceContext{}}
	var off *Tracer
	cases := []struct {
		name   string
		tracer *Tracer
		span   bool
		want   bool
	}{
		{"tracing on, under a span", on, true, true},
		{"tracing on, outside any span (the poller)", on, false, false},
		{"tracing off", off, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got = ""
			ctx := context.Background()
			var spanID string
			if tc.span {
				c, span := on.StartClient(ctx, "x")
				defer span.End()
				ctx, spanID = c, span.SpanContext().SpanID().String()
			}
			base := &http.Client{}
			c := tc.tracer.Client(base)
			if tc.tracer == nil && c != base {
				t.Fatal("tracing off must leave the client as it is")
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", up.URL, nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if (got != "") != tc.want || (tc.want && !strings.Contains(got, spanID)) {
				t.Fatalf("traceparent %q, want one naming span %s: %v", got, spanID, tc.want)
			}
			if req.Header.Get("traceparent") != "" {
				t.Fatal("the caller's request was changed")
			}
		})
	}
}

func TestNoTracerWithoutTheEnvironment(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tr, err := NewTracer(context.Background(), "v")
	if err != nil || tr != nil || tr.On() {
		t.Fatalf("tracer %v, err %v: want none", tr, err)
	}
	tr.Inject(context.Background(), http.Header{}) // a nil tracer is safe to use
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
