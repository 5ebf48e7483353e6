package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/podline/podline/pullrecords"
)

// openPullRecords loads the node's records of image pulls from
// <root-dir>/image_manager, the kubelet's place for them, and settles
// the intents of pulls a previous run did not see end (one image listing,
// only if there are any). A listing that fails is logged: every pod
// verifies those images until a later start settles them.
func openPullRecords(ctx context.Context, o *options, images pullrecords.ImageLister, log *slog.Logger) (*pullrecords.Store, error) {
	policy, err := o.imageCheck.checkPolicy()
	if err != nil {
		return nil, err
	}
	records, err := pullrecords.Open(filepath.Join(o.rootDir, "image_manager"), policy, log)
	if err != nil {
		return nil, fmt.Errorf("image pull records: %w", err)
	}
	if err := records.ResolveIntents(ctx, images); err != nil {
		log.Warn("image pull intents of the previous run left as they are; their images will be verified", "err", err)
	}
	log.Info("image credential verification", "policy", policy.String(), "allowlist", o.imageCheck.allowlist.String())
	return records, nil
}
