package s3test

import (
	"bufio"
	"errors"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestEnv(t *testing.T) {
	in := []string{"PATH=/bin", "AWS_CA_BUNDLE=/etc/ca.pem", "AWS_PROFILE=prod", "LITESTREAM_ACCESS_KEY_ID=x", "https_proxy=http://p:3128", "HOME=/root", "HTTP_PROXY=http://p", "no_proxy=*"}
	s := &Server{AccessKey: "ak", SecretKey: "sk"}
	got := strings.Join(s.Env(in), " ")
	want := "PATH=/bin HOME=/root AWS_EC2_METADATA_DISABLED=true AWS_REGION=us-east-1 " +
		"AWS_ACCESS_KEY_ID=ak AWS_SECRET_ACCESS_KEY=sk LITESTREAM_ACCESS_KEY_ID=ak LITESTREAM_SECRET_ACCESS_KEY=sk"
	if got != want {
		t.Errorf("Env:\n got %s\nwant %s", got, want)
	}
}

// TestSetenv: the test process gets the server's environment for the
// test, and its own back afterwards.
func TestSetenv(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "/etc/ca.pem")
	t.Setenv("https_proxy", "http://p:3128")
	t.Setenv("AWS_ACCESS_KEY_ID", "machine")
	s := &Server{AccessKey: "ak", SecretKey: "sk"}
	t.Run("inside", func(t *testing.T) {
		s.Setenv(t)
		for _, name := range []string{"AWS_CA_BUNDLE", "https_proxy"} {
			if v, set := os.LookupEnv(name); set {
				t.Errorf("%s=%q is still set", name, v)
			}
		}
		for name, want := range map[string]string{"AWS_ACCESS_KEY_ID": "ak", "AWS_SECRET_ACCESS_KEY": "sk", "AWS_EC2_METADATA_DISABLED": "true"} {
			if got := os.Getenv(name); got != want {
				t.Errorf("%s=%q, want %q", name, got, want)
			}
		}
	})
	for name, want := range map[string]string{"AWS_CA_BUNDLE": "/etc/ca.pem", "https_proxy": "http://p:3128", "AWS_ACCESS_KEY_ID": "machine"} {
		if got := os.Getenv(name); got != want {
			t.Errorf("after the test %s=%q, want %q back", name, got, want)
		}
	}
}

// TestFakeStopRestart: the fake refuses connections while stopped and
// serves the same objects on the same endpoint after Restart.
func TestFakeStopRestart(t *testing.T) {
	s := StartFake(t, Options{Bucket: "fake-one"})
	obj := s.Endpoint + "/fake-one/kept"
	put(t, obj, "survives")
	s.Stop(t)
	if _, err := http.Get(obj); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("GET of a stopped server: %v, want connection refused", err)
	}
	s.Restart(t)
	if got := get(t, obj); got != "survives" {
		t.Fatalf("after Restart the object reads %q", got)
	}
}

func put(t *testing.T, url, body string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT %s: %s", url, resp.Status)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
