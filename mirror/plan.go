package mirror

import (
	"cmp"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/sources"
)

type podName struct{ namespace, name string }

func nameOf(p *v1.Pod) podName { return podName{p.Namespace, p.Name} }

// mirrorRef is what the manager knows of one mirror pod in the API server.
type mirrorRef struct {
	uid      types.UID
	hash     string // its config.mirror annotation
	deleting bool   // it carries a deletionTimestamp
}

func refOf(p *v1.Pod) mirrorRef {
	return mirrorRef{
		uid:      p.UID,
		hash:     p.Annotations[sources.ConfigMirrorAnnotation],
		deleting: p.DeletionTimestamp != nil,
	}
}

// hashOf is a static pod's config hash, which its mirror must carry as
// config.mirror. Static pods carry it as config.hash (equal to their UID).
func hashOf(static *v1.Pod) string {
	if h := static.Annotations[sources.ConfigHashAnnotation]; h != "" {
		return h
	}
	return string(static.UID)
}

// serves reports whether ref is a good mirror of a static pod with hash.
func (r mirrorRef) serves(hash string) bool { return !r.deleting && r.hash == hash }

type op int

const (
	opCreate  op = iota
	opReplace    // delete uid, then create
	opDelete
)

func (o op) String() string {
	return [...]string{"create", "replace", "delete"}[o]
}

type action struct {
	op     op
	name   podName
	static *v1.Pod   // create, replace: the static pod to mirror
	uid    types.UID // replace, delete: the mirror pod to delete
}

// plan decides what to do so that every static pod has a mirror carrying
// its hash and, once orphans may go, no mirror is left without a static pod.
// It is pure: statics and mirrors are the current state by name.
//
// A mirror marked for deletion is replaced rather than waited for: nothing
// but podline would ever finish deleting it, and a static pod whose mirror
// someone deletes is to be shown again, not to vanish.
func plan(statics map[podName]*v1.Pod, mirrors map[podName]mirrorRef, deleteOrphans bool) []action {
	var acts []action
	for name, s := range statics {
		m, ok := mirrors[name]
		switch {
		case !ok:
			acts = append(acts, action{op: opCreate, name: name, static: s})
		case !m.serves(hashOf(s)):
			acts = append(acts, action{op: opReplace, name: name, static: s, uid: m.uid})
		}
	}
	if deleteOrphans {
		for name, m := range mirrors {
			if _, ok := statics[name]; !ok {
				acts = append(acts, action{op: opDelete, name: name, uid: m.uid})
			}
		}
	}
	slices.SortFunc(acts, func(a, b action) int {
		return cmp.Or(cmp.Compare(a.name.namespace, b.name.namespace), cmp.Compare(a.name.name, b.name.name))
	})
	return acts
}
