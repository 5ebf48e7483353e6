package volumes

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// hostDir is a directory next to the volume that stands for the host:
// one file in it, whose bytes and mode must survive every write.
func hostDir(t *testing.T) (host, victim string) {
	t.Helper()
	host = filepath.Join(t.TempDir(), "host")
	if err := os.Mkdir(host, 0o755); err != nil {
		t.Fatal(err)
	}
	victim = filepath.Join(host, "victim")
	if err := os.WriteFile(victim, []byte("host data"), 0o600); err != nil {
		t.Fatal(err)
	}
	return host, victim
}

// hostUntouched fails unless host still holds only its victim, with its
// bytes, mode and owners.
func hostUntouched(t *testing.T, host, victim string) {
	t.Helper()
	entries, err := os.ReadDir(host)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "victim" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("host directory holds %v, want only victim", names)
	}
	data, err := os.ReadFile(victim)
	if err != nil || string(data) != "host data" {
		t.Errorf("victim: %q, %v", data, err)
	}
	if m := modeOf(t, victim); m != 0o600 {
		t.Errorf("victim mode %o, want 600", m)
	}
	if g := groupOf(t, victim); g != 0 {
		t.Errorf("victim group %d, want 0", g)
	}
}

// A container that could change a configMap volume between two updates
// (its mount is read-only, so only through another bug) plants symlinks
// to the host in place of what the writer made. The next update writes
// the new files into a fresh directory and replaces or removes what it
// finds, never following a planted link: nothing outside the volume is
// written, chmodded, chowned or removed.
func TestWriteUpdateDoesNotFollowPlantedLinks(t *testing.T) {
	first := func() payload {
		return payload{"sub/a": {data: []byte("1"), mode: 0o644}, "k": {data: []byte("1"), mode: 0o644}}
	}
	second := func() payload {
		return payload{"sub/a": {data: []byte("2"), mode: 0o640}, "sub/b": {data: []byte("2"), mode: 0o644}, "k": {data: []byte("2"), mode: 0o600}}
	}
	f := func(name string, plant func(t *testing.T, dir, host, victim string)) {
		t.Run(name, func(t *testing.T) {
			dir := volumeDir(t)
			host, victim := hostDir(t)
			// With an fsGroup the writer also chowns and chmods.
			w := testWriter()
			w.gid = 4242
			if _, err := w.write(dir, first()); err != nil {
				t.Fatal(err)
			}
			plant(t, dir, host, victim)
			_, err := w.write(dir, second())
			hostUntouched(t, host, victim)
			if err != nil {
				// Refusing is fine; writing through is not.
				t.Logf("update refused: %v", err)
				return
			}
			got := contents(t, dir)
			if got["sub/a"] != "2" || got["sub/b"] != "2" || got["k"] != "2" {
				t.Errorf("volume holds %v after the update", got)
			}
		})
	}
	swap := func(t *testing.T, path, target string) {
		t.Helper()
		if err := os.RemoveAll(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
	f("a directory of the data swapped for a link to the host", func(t *testing.T, dir, host, _ string) {
		swap(t, filepath.Join(dir, dataTarget(t, dir), "sub"), host)
	})
	f("a directory of the data swapped for a link to /", func(t *testing.T, dir, _, _ string) {
		swap(t, filepath.Join(dir, dataTarget(t, dir), "sub"), "/")
	})
	f("a file of the data swapped for a link to a host file", func(t *testing.T, dir, _, victim string) {
		swap(t, filepath.Join(dir, dataTarget(t, dir), "k"), victim)
	})
	f("the data directory swapped for a link to the host", func(t *testing.T, dir, host, _ string) {
		swap(t, filepath.Join(dir, dataTarget(t, dir)), host)
	})
	f("..data pointed at the host", func(t *testing.T, dir, host, _ string) {
		swap(t, filepath.Join(dir, dataLink), host)
	})
	f("..data pointed at a hidden link to the host", func(t *testing.T, dir, host, _ string) {
		if err := os.Symlink(host, filepath.Join(dir, "..evil")); err != nil {
			t.Fatal(err)
		}
		swap(t, filepath.Join(dir, dataLink), "..evil")
	})
	f("a top-level name swapped for a link to the host", func(t *testing.T, dir, host, _ string) {
		swap(t, filepath.Join(dir, "sub"), host)
	})
	f("a top-level file swapped for a link to a host file", func(t *testing.T, dir, _, victim string) {
		swap(t, filepath.Join(dir, "k"), victim)
	})
	f("..data_tmp planted as a link to the host", func(t *testing.T, dir, host, _ string) {
		swap(t, filepath.Join(dir, dataLinkTmp), host)
	})
	f("a crash leftover planted as a link to the host", func(t *testing.T, dir, host, _ string) {
		// The writer removes leftover data directories: a link must go,
		// never what it points at (the deletion half of the kubelet's
		// CVE-2017-1002102).
		swap(t, filepath.Join(dir, "..2020_01_01_00_00_00.1"), host)
	})
}

// The writer fills a directory it has just made. If something could plant
// links in it between the mkdir and the writes, the writes must not
// follow them: fill creates every file and directory new and refuses what
// is already there.
func TestFillRefusesPlantedLinks(t *testing.T) {
	f := func(name string, pl payload, plant func(t *testing.T, ts, host, victim string)) {
		t.Run(name, func(t *testing.T) {
			dir := volumeDir(t)
			host, victim := hostDir(t)
			ts := "..2020_01_01_00_00_00.7"
			if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
				t.Fatal(err)
			}
			plant(t, filepath.Join(dir, ts), host, victim)
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			w := testWriter()
			w.gid = 4242
			if err := w.fill(root, ts, pl); err == nil {
				t.Error("fill wrote over a planted link")
			}
			hostUntouched(t, host, victim)
		})
	}
	one := file{data: []byte("x"), mode: 0o644}
	f("a file path is a link to a host file", payload{"k": one}, func(t *testing.T, ts, _, victim string) {
		os.Symlink(victim, filepath.Join(ts, "k"))
	})
	f("a file path is a relative link out of the volume", payload{"k": one}, func(t *testing.T, ts, host, _ string) {
		rel, _ := filepath.Rel(ts, filepath.Join(host, "victim"))
		os.Symlink(rel, filepath.Join(ts, "k"))
	})
	f("a file path is a dangling link into the host", payload{"k": one}, func(t *testing.T, ts, host, _ string) {
		os.Symlink(filepath.Join(host, "made"), filepath.Join(ts, "k"))
	})
	f("a directory path is a link to the host", payload{"sub/k": one}, func(t *testing.T, ts, host, _ string) {
		os.Symlink(host, filepath.Join(ts, "sub"))
	})
	f("a directory path is a link to /", payload{"etc/k": one}, func(t *testing.T, ts, _, _ string) {
		os.Symlink("/", filepath.Join(ts, "etc"))
	})
}

// Item paths that leave the volume are refused before anything is
// written. configMap, secret and projected items go through project;
// downward API items and tokens through the same payload check.
func TestProjectRefusesEscapingItemPaths(t *testing.T) {
	data := map[string][]byte{"k": []byte("v")}
	for _, p := range []string{"../x", "a/../../x", "/etc/passwd", "..data", "..2020_01_01", "a/./b", "a//b", "a/", ""} {
		pl := payload{}
		if err := project(pl, configMapRef("ns", "c"), data, []corev1.KeyToPath{{Key: "k", Path: p}}, nil, false); err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		dir := volumeDir(t)
		_, err := testWriter().write(dir, pl)
		wantErr(t, err, ErrInvalid, "")
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%q: refused payload left %d entries", p, len(entries))
		}
	}
}
