package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
	"github.com/simdex/simdex/internal/corpustest"
	"github.com/simdex/simdex/mailthread"
)

// TestMailBoilerplate indexes mail-usrp (its first SIMDEX_MAIL_N messages,
// 1000 by default) and checks that boilerplate makes no unrelated
// messages alike: no identical set joins messages of different subjects
// (a question posted twice is one, under one subject), and at most 1 % of the reported pairs are unrelated by the
// evaluation's truth (word 5-gram resemblance and both containments
// under 0.3).
func TestMailBoilerplate(t *testing.T) {
	mailUSRP := filepath.Join(corpustest.Suite(t), "mail-usrp", "eml")
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("SIMDEX_MAIL_N")); err == nil {
		n = v
	}
	files, err := filepath.Glob(filepath.Join(mailUSRP, "*.eml"))
	if err != nil || len(files) < n {
		t.Fatalf("mail-usrp: %d files, %v", len(files), err)
	}
	var names []string
	for _, f := range files[:n] {
		names = append(names, filepath.Base(f))
	}
	ix, _ := openIndex(t, filepath.Join(t.TempDir(), "idx.db"))
	ids, inputs := ingestMailTexts(t, ix, mailUSRP, names...)
	byID := make(map[index.DocID]string, len(ids))
	for name, id := range ids {
		byID[id] = name
	}
	an, err := ix.Analyse(context.Background(), ix.Options().Thresholds)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range an.Identical {
		threads := map[string]bool{}
		var members []string
		for _, d := range set {
			if name := byID[d]; name != "" {
				threads[subjectWords(inputs[name].Doc.Meta["subject"])] = true
				members = append(members, name)
			}
		}
		if len(threads) > 1 {
			t.Errorf("identical set of %d messages with %d subjects: %v: %.200q", len(set), len(threads), members, inputs[members[0]].Text)
		}
	}
	false_, pairs := 0, 0
	for _, p := range an.Pairs {
		a, b := an.ByContent[p.A], an.ByContent[p.B]
		if len(a) == 0 || len(b) == 0 || byID[a[0]] == "" || byID[b[0]] == "" {
			continue // attachments
		}
		pairs++
		ta, tb := string(inputs[byID[a[0]]].Text), string(inputs[byID[b[0]]].Text)
		if wordContainment(ta, tb) < 0.3 && wordContainment(tb, ta) < 0.3 {
			false_++
			if false_ <= 5 {
				t.Logf("unrelated pair %s %s: %+v", byID[a[0]], byID[b[0]], p.Scores)
			}
		}
	}
	t.Logf("%d messages: %d identical sets, %d message pairs reported, %d unrelated", n, len(an.Identical), pairs, false_)
	if false_*100 > pairs {
		t.Errorf("%d of %d reported pairs are unrelated messages", false_, pairs)
	}
}

// subjectWords is a subject without its tags, as its words.
func subjectWords(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(mailthread.Subject(s)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

// TestReviewedByReplies indexes 49 replies whose whole body is "Looks
// good" and one reviewer's Reviewed-by line, each to another patch: the
// subject, part of the compared text, tells them apart, so they form no
// identical set and no family. (With the canonical form, the estimated
// containment of such short texts, from three or four samples, reaches 1:
// the analysis scores them again from their kept texts.)
func TestReviewedByReplies(t *testing.T) {
	x, err := extract.New(extract.Options{Limits: extract.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	opts := index.DefaultOptions()
	opts.KeepText = true // short texts are scored again from their texts
	ix, _ := openIndexWith(t, filepath.Join(t.TempDir(), "idx.db"), opts)
	in := ingest.New(x, ix)
	areas := []string{"nvme", "block", "xfs", "scsi", "mm", "net", "ext4"}
	verbs := []string{"fix a race in", "remove the unused field from", "simplify error handling in", "split up", "rename the helper in", "document the locking of", "use a bitmap for"}
	objects := strings.Fields("request_queue bio_split folio_lock inode_cache dquot_alloc sk_buff page_pool " +
		"tag_set hctx_map zone_append iomap_dio xattr_list btree_cursor log_item " +
		"host_template sense_buffer lun_scan eh_handler target_alloc cmd_priv port_state " +
		"vma_merge lru_gen slab_cache memcg_stat huge_pmd swap_slot kmem_cache " +
		"napi_poll rx_ring tc_action xdp_frame gro_cell tcp_sock rtnl_lock " +
		"extent_tree mb_cache jbd2_handle dir_index orphan_list fast_commit quota_inode " +
		"admin_queue ctrl_state ns_head fabrics_opts keep_alive async_event pci_bar")
	for i := range 49 {
		subject := fmt.Sprintf("Re: [PATCH %d/%d] %s: %s %s", i%7+1, 7, areas[i%7], verbs[i/7], objects[i])
		eml := "From: Christoph Hellwig <hch@lst.de>\r\nSubject: " + subject + fmt.Sprintf("\r\nMessage-ID: <r%d@lst.de>\r\nIn-Reply-To: <p%d@x>\r\n\r\n", i, i) +
			"Looks good:\r\n\r\nReviewed-by: Christoph Hellwig <hch@lst.de>\r\n"
		if _, err := in.Ingest(context.Background(), ingest.Object{Key: fmt.Sprint("r", i), Name: fmt.Sprint("r", i, ".eml"), Body: strings.NewReader(eml)}); err != nil {
			t.Fatal(err)
		}
	}
	an, err := ix.Analyse(context.Background(), ix.Options().Thresholds)
	if err != nil {
		t.Fatal(err)
	}
	if len(an.Identical) > 0 || len(an.Families) > 0 {
		t.Errorf("%d identical sets, %d pairs and %d families among 49 unrelated replies", len(an.Identical), len(an.Pairs), len(an.Families))
	}
}
