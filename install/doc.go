// Package install keeps plugins installed in a home directory: what is
// installed, from where, with which digests, and what each plugin was
// allowed to run.
//
// A home has this layout, which is part of the contract (docs/install.md):
//
//	HOME/plugkit.lock            what is installed: the single commit point
//	HOME/store/sha256/HEX/       immutable plugin trees, one per archive digest, read-only
//	HOME/store/sha256/HEX.files  each tree's file list: path, mode, sha256 of every file
//	HOME/data/NAME/              PLUGIN_DATA of each plugin (0700), kept across updates
//	HOME/data/.NAME.source       the source that created data/NAME
//	HOME/policy.json             the trust policy, when one was given
//	HOME/config.json             settings of the home (consentOnCode), optional
//
// plus files that exist only while a writer runs or after it was killed:
// HOME/.writer (the writers' file lock), HOME/.journal (the post-commit
// steps of an interrupted change) and HOME/.tmp/ (trees and files being
// written or deleted). The next writer finishes or undoes what the journal
// says and removes the rest.
//
// Readers (Open, List, Verify) never write and never wait: they read the
// lock file, which a writer replaces atomically, and the trees it names,
// which are complete before any lock names them and are removed only after
// no lock names them.
//
// One writer runs at a time (a file lock on HOME/.writer). A change is
// prepared in full (trees written read-only and synced, data directories
// prepared), then committed by replacing plugkit.lock (temporary file,
// fsync, rename, fsync of the directory); only then is anything the old
// lock named removed. A writer killed at any moment leaves the previous
// lock and everything it names intact.
package install
