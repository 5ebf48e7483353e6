package stages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubeletv1alpha1 "k8s.io/kubelet/config/v1alpha1"

	"github.com/podline/podline/credentials"
	"github.com/podline/podline/cri"
	"github.com/podline/podline/pullrecords"
)

// ImagePuller runs the node's image pulls. Pods that need one image with
// the same credentials share one pull: the first starts it, the others
// wait for it, and its result, success or failure, reaches them all. The
// pulls of different images are bounded as the kubelet bounds them: one
// at a time (--serialize-image-pulls), at most a number at once
// (--max-parallel-image-pulls), or unlimited.
//
// A pull runs in the background under its own context: a waiting pod that
// goes away does not cancel it for the others, and it is cancelled only
// once no pod waits for it any more.
//
// With records, every pull is recorded (its intent before it starts, the
// credentials that pulled the image after), and the puller answers
// whether a pod may use an image already on the node (MayUse).
type ImagePuller struct {
	images ImageRuntime
	// records are the node's records of image pulls; nil checks nothing
	// and records nothing (every pod may use every image present).
	records *pullrecords.Store
	// slots bounds the pulls in progress; nil is unlimited.
	slots chan struct{}

	mu      sync.Mutex
	flights map[flightKey]*pullFlight
}

// NewImagePuller returns the puller of the node. With serialize, pulls run
// one at a time; otherwise at most maxParallel at once, or unlimited when
// maxParallel is 0. records may be nil (see ImagePuller).
func NewImagePuller(images ImageRuntime, records *pullrecords.Store, serialize bool, maxParallel int) *ImagePuller {
	p := &ImagePuller{images: images, records: records, flights: make(map[flightKey]*pullFlight)}
	switch {
	case serialize:
		p.slots = make(chan struct{}, 1)
	case maxParallel > 0:
		p.slots = make(chan struct{}, maxParallel)
	}
	return p
}

// PullRequest is one pod's need of an image.
type PullRequest struct {
	// Image is the reference as the pod names it.
	Image string
	// Credentials are tried in order; none pulls anonymously.
	Credentials []credentials.Credential
	// SandboxConfig is the pod's, passed to the runtime (of the pod that
	// starts the pull, when pods share it).
	SandboxConfig *runtimeapi.PodSandboxConfig
	// IfAbsent: the pod's policy pulls only a missing image. A pull started
	// for such a pod first asks the runtime again, so a pod that found the
	// image missing just before another pull of it finished does not pull
	// it a second time, if its credentials may use what that pull brought
	// (MayUse). A pull that verifies the pod's credentials for an image
	// present is not IfAbsent: it must reach the registry.
	IfAbsent bool
}

// PullResult is what one pull gave.
type PullResult struct {
	ImageRef string
	// Size is the image's size after the pull, 0 if the runtime did not
	// say.
	Size uint64
	// Pulled is false when the image was found present after all.
	Pulled bool
	// PullTime is how long the runtime took, without the wait for a slot.
	PullTime time.Duration
	Err      error
}

// flightKey identifies pulls that can be shared: the same image (as the
// registry resolves it) with the same credentials. A pull that may find
// the image present and skip the registry is kept apart from one that
// must go to the registry, so an Always pod never takes a skipped pull for
// its own.
type flightKey struct {
	image    string
	creds    string
	ifAbsent bool
}

type pullFlight struct {
	done    chan struct{}
	result  PullResult
	cancel  context.CancelFunc
	waiters int
}

// Pull makes the image present, sharing a pull in progress with the same
// key. It returns when that pull ends or ctx does; the latter leaves the
// pull to its other waiters.
func (p *ImagePuller) Pull(ctx context.Context, req PullRequest) PullResult {
	key := flightKey{image: canonicalImage(req.Image), creds: credentialsDigest(req.Credentials), ifAbsent: req.IfAbsent}
	p.mu.Lock()
	f := p.joinLocked(key)
	if f == nil {
		f = p.startLocked(key, req)
	} else {
		pullsJoined.Inc()
	}
	f.waiters++
	p.mu.Unlock()

	select {
	case <-f.done:
		return f.result
	case <-ctx.Done():
		p.leave(key, f)
		return PullResult{Err: fmt.Errorf("wait for the pull of %s: %w", req.Image, ctx.Err())}
	}
}

// joinLocked finds a pull in progress that serves key. Any pull that goes
// to the registry serves a pod that only needs the image present.
func (p *ImagePuller) joinLocked(key flightKey) *pullFlight {
	pulling := key
	pulling.ifAbsent = false
	if f := p.flights[pulling]; f != nil {
		return f
	}
	return p.flights[key]
}

func (p *ImagePuller) startLocked(key flightKey, req PullRequest) *pullFlight {
	ctx, cancel := context.WithCancel(context.Background())
	f := &pullFlight{done: make(chan struct{}), cancel: cancel}
	p.flights[key] = f
	go func() {
		defer cancel()
		res := p.run(ctx, req)
		p.mu.Lock()
		if p.flights[key] == f {
			delete(p.flights, key)
		}
		f.result = res
		p.mu.Unlock()
		close(f.done)
	}()
	return f
}

// leave drops one waiter; the last one to leave cancels the pull and
// unlists it, so a pod that comes later starts afresh.
func (p *ImagePuller) leave(key flightKey, f *pullFlight) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f.waiters--
	if f.waiters > 0 {
		return
	}
	if p.flights[key] == f {
		delete(p.flights, key)
	}
	f.cancel()
}

// run is one pull: a second look when the pod only needs the image
// present, the pull's intent recorded, a slot, then the credentials in
// order, and the one that pulled recorded; or, all failing, the image the
// pull may have left.
func (p *ImagePuller) run(ctx context.Context, req PullRequest) PullResult {
	if req.IfAbsent {
		if img, err := p.images.ImageStatus(ctx, req.Image); err == nil && img != nil &&
			p.MayUse(req.Image, img, v1.PullIfNotPresent, func() []credentials.Credential { return req.Credentials }) == pullrecords.Use {
			return PullResult{ImageRef: img.GetId(), Size: img.GetSize()}
		}
	}
	ref, parseErr := credentials.ParseReference(req.Image)
	recording := p.records != nil && parseErr == nil
	if recording {
		if err := p.records.PullStarted(ref); err != nil {
			return PullResult{Err: err}
		}
	}
	if err := p.acquire(ctx); err != nil {
		if recording {
			p.records.PullFailed(ref, "")
		}
		return PullResult{Err: fmt.Errorf("wait for a pull slot for %s: %w", req.Image, err)}
	}
	defer p.release()
	var before string
	if recording {
		// An error leaves "": whatever is there after a failure counts
		// as the pull's own.
		if img, err := p.images.ImageStatus(ctx, req.Image); err == nil && img != nil {
			before = img.GetId()
		}
	}
	start := time.Now()
	imageRef, used, err := p.pullWithCredentials(ctx, req)
	if err != nil {
		if recording {
			p.recordFailure(ctx, ref, req.Image, before)
		}
		pullsFailed.Inc()
		return PullResult{Err: err, PullTime: time.Since(start)}
	}
	res := PullResult{ImageRef: imageRef, Pulled: true}
	lookup := imageRef
	if lookup == "" {
		lookup = req.Image
	}
	// The size is for the event only: a failure to read it fails nothing.
	img, err := p.images.ImageStatus(ctx, lookup)
	if err == nil && img != nil {
		res.Size = img.GetSize()
		if imageRef == "" {
			imageRef = img.GetId()
		}
	}
	if recording && imageRef != "" {
		p.records.PullSucceeded(ref, imageRef, used)
	}
	// A runtime that names no image ID leaves the intent: the image is
	// verified by every pod, not taken for a preloaded one.
	res.PullTime = time.Since(start)
	pullsSucceeded.Inc()
	pullDuration.Update(res.PullTime.Seconds())
	return res
}

// recordFailure ends the intent of a failed pull. The runtime may have
// stored the image all the same (containerd answers Canceled to a pull
// cancelled after it created the image, common when the last pod waiting
// for a long pull goes away), and an image left with no record would be
// taken for a preloaded one that every pod may use. So the runtime is
// asked for the image, with a context the pull's cancellation does not
// reach (the runtime client bounds the call); an image it holds that is
// not the one the name held before the pull (before) is recorded for
// every pod to verify.
func (p *ImagePuller) recordFailure(ctx context.Context, ref credentials.Reference, image, before string) {
	img, err := p.images.ImageStatus(context.WithoutCancel(ctx), image)
	switch {
	case err != nil:
		p.records.PullUncertain(ref)
	case img == nil || img.GetId() == before:
		p.records.PullFailed(ref, "")
	default:
		p.records.PullFailed(ref, img.GetId())
	}
}

// pullWithCredentials tries each credential until one pulls, and returns
// it (nil: pulled anonymously); failing all, it reports every distinct
// error, as the kubelet does.
func (p *ImagePuller) pullWithCredentials(ctx context.Context, req PullRequest) (string, *credentials.Credential, error) {
	if len(req.Credentials) == 0 {
		ref, err := p.images.PullImage(ctx, req.Image, nil, req.SandboxConfig)
		if err != nil {
			return "", nil, &pullError{errs: []error{err}}
		}
		return ref, nil, nil
	}
	pe := &pullError{}
	for i, c := range req.Credentials {
		auth := &runtimeapi.AuthConfig{Username: c.Username, Password: c.Password}
		ref, err := p.images.PullImage(ctx, req.Image, auth, req.SandboxConfig)
		if err == nil {
			return ref, &req.Credentials[i], nil
		}
		pe.errs = append(pe.errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return "", nil, pe
}

func (p *ImagePuller) acquire(ctx context.Context) error {
	if p.slots == nil {
		return nil
	}
	start := time.Now()
	defer func() { pullSlotWait.UpdateDuration(start) }()
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *ImagePuller) release() {
	if p.slots != nil {
		<-p.slots
	}
}

// pullError is a failed pull: the runtime's error for each credential
// tried. Its message is the runtime's own words (what a user compares
// with other nodes'), and it matches each error's class with errors.Is.
type pullError struct{ errs []error }

func (e *pullError) Error() string {
	var msgs []string
	for _, err := range e.errs {
		m := cri.RuntimeError(err).Error()
		if !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

func (e *pullError) Unwrap() []error { return e.errs }

// canonicalImage makes "busybox" and "docker.io/library/busybox:latest"
// one pull.
func canonicalImage(image string) string {
	if ref, err := credentials.ParseReference(image); err == nil {
		return ref.String()
	}
	return image
}

// credentialsDigest identifies a list of credentials without keeping the
// passwords in the map of pulls.
func credentialsDigest(creds []credentials.Credential) string {
	if len(creds) == 0 {
		return ""
	}
	h := sha256.New()
	for _, c := range creds {
		fmt.Fprintf(h, "%d:%s%d:%s", len(c.Username), c.Username, len(c.Password), c.Password)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// isPullCanceled: the pull ended because its context did, not because the
// registry or runtime refused.
func isPullCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, cri.ErrCanceled)
}

// MayUse is the check before a pod starts from image, present on the node
// as img (what the runtime's ImageStatus of image answered): Use, Verify
// (pull it with the pod's credentials, so the registry checks them) or
// Refuse (verification is due and the pull policy is Never). podCreds
// gives the pod's credentials for the image; it is called only when the
// image's record names secrets. Without records every pod may use every
// image present.
func (p *ImagePuller) MayUse(image string, img *runtimeapi.Image, pullPolicy v1.PullPolicy, podCreds func() []credentials.Credential) pullrecords.Verdict {
	if p.records == nil {
		return pullrecords.Use
	}
	ref, err := credentials.ParseReference(image)
	if err != nil {
		return pullrecords.Verify // names are parsed before they get here
	}
	return p.records.Check(ref, img, pullPolicy, func() []kubeletv1alpha1.ImagePullSecret {
		return pullrecords.SecretsOf(podCreds())
	}).Verdict
}

// Verifies reports whether the puller checks pods' credentials for images
// already on the node.
func (p *ImagePuller) Verifies() bool { return p.records != nil }
