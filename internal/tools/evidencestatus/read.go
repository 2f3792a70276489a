package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// record is what an evidence file says about where it came from. Any
// field may be absent in files written before the evidence head existed.
type record struct {
	Path   string
	Commit string // as recorded, perhaps abbreviated; "" when absent
	// Dirty is nil when the file records no dirty flag.
	Dirty *bool
	// PTX maps module name to SHA-256; nil when no per-module digests.
	PTX map[string]string
	// PTXOne is a single module digest (older launch records kept only
	// the module they launch); PTXOneModule names it.
	PTXOne, PTXOneModule string
	// Manifest is the recorded SHA-256 of ptx/manifest.json.
	Manifest string
	// Imported marks figures transcribed from documents, not measured.
	Imported bool
	// Companion names the JSON record a text file belongs to.
	Companion string
	Text      bool
}

var textCommitRE = regexp.MustCompile(`\bcommit\s+([0-9a-f]{7,40})\b`)

// readRecord reads one evidence file: a JSON object, JSON lines (the first
// object), or text or CSV (the companion of the JSON file of the same name
// beside it, else judged by a "commit <hash>" it mentions).
func readRecord(root, rel string) (*record, error) {
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	r := &record{Path: rel}
	switch filepath.Ext(rel) {
	case ".json":
		return r, r.fromJSON(b)
	case ".jsonl":
		first, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
		return r, r.fromJSON(first)
	}
	r.Text = true
	sib := strings.TrimSuffix(rel, filepath.Ext(rel)) + ".json"
	if _, err := os.Stat(filepath.Join(root, sib)); err == nil {
		r.Companion = sib
		return r, nil
	}
	if m := textCommitRE.FindSubmatch(b); m != nil {
		r.Commit = string(m[1])
	}
	return r, nil
}

func (r *record) fromJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: not a JSON object: %w", r.Path, err)
	}
	str := func(src map[string]json.RawMessage, k string) string {
		var s string
		if v, ok := src[k]; ok && json.Unmarshal(v, &s) == nil {
			return s
		}
		return ""
	}
	r.Commit, r.Manifest = str(m, "commit"), str(m, "ptx_manifest_sha256")
	if v, ok := m["dirty"]; ok {
		var d bool
		if json.Unmarshal(v, &d) == nil {
			r.Dirty = &d
		}
	}
	if v, ok := m["ptx_sha256"]; ok {
		if json.Unmarshal(v, &r.PTX) != nil {
			r.PTX = nil
			var one string
			if json.Unmarshal(v, &one) == nil {
				r.PTXOne, r.PTXOneModule = one, "basic"
			}
		}
	}
	if v, ok := m["provenance"]; ok {
		var p map[string]json.RawMessage
		if json.Unmarshal(v, &p) == nil {
			if r.Commit == "" {
				r.Commit = str(p, "commit")
			}
			if r.Manifest == "" {
				r.Manifest = str(p, "ptx_manifest_sha256")
			}
			r.Imported = str(p, "kind") == "historical_documentation_import"
		}
	}
	return nil
}

// lacks lists the head fields a JSON record does not have.
func (r *record) lacks() []string {
	if r.Text || r.Imported {
		return nil
	}
	var out []string
	if r.Commit == "" {
		out = append(out, "commit")
	}
	if r.Dirty == nil {
		out = append(out, "dirty flag")
	}
	return out
}

// evidenceFiles lists the evidence files under dirs (relative to root):
// .json, .jsonl, .txt and .csv, sorted.
func evidenceFiles(root string, dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch filepath.Ext(p) {
			case ".json", ".jsonl", ".txt", ".csv":
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
