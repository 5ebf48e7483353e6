package main

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/podline/podline/server"
	"github.com/podline/podline/server/auth"
)

// servingFilesEvery is how often the serving certificate's files and the
// client CA bundle are looked at for a change: a minute, as the kubelet's
// own reload of them.
var servingFilesEvery = time.Minute

// reloadServingFiles reads the serving pair and the client CA bundle again
// whenever their files change, until ctx ends. Either may be nil: a
// certificate from --rotate-server-certificates reloads itself, and no
// --client-ca-file means no bundle.
func (a *agent) reloadServingFiles(ctx context.Context, cert *server.CertFiles, ca *auth.ClientCAFile) {
	if cert == nil && ca == nil {
		return
	}
	wait.UntilWithContext(ctx, func(context.Context) {
		if cert != nil {
			if changed, err := cert.Reload(); err != nil {
				a.log.Warn("authenticated port: serving certificate not reloaded; the last one stays in service", "err", err)
			} else if changed {
				a.log.Info("authenticated port: serving certificate reloaded")
			}
		}
		if ca != nil {
			if changed, err := ca.Reload(); err != nil {
				a.log.Warn("authenticated port: --client-ca-file not reloaded; the last bundle stays in force", "err", err)
			} else if changed {
				a.log.Info("authenticated port: --client-ca-file reloaded")
			}
		}
	}, servingFilesEvery)
}
