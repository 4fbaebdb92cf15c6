/// Where a file belongs, by what it is — the four places Apple's storage guidance names.
///
/// | role | holds | backed up | purgeable |
/// |---|---|---|---|
/// | ``documents`` | what the user created and sees | yes | no |
/// | ``applicationSupport`` | the app's private data | yes, unless excluded | no |
/// | ``caches`` | what can be downloaded or made again | never | yes |
/// | ``temporary`` | what is needed only for a moment | never | yes; delete after use |
public enum ContainerRole: String, Sendable, Hashable, CaseIterable, Codable {
    /// User-visible, user-created documents. Backed up.
    case documents
    /// The app's own private files (databases, settings, downloaded content it cannot lose).
    /// Backed up unless a file or folder is excluded.
    case applicationSupport
    /// Files the app can re-create or download again. Never backed up; the system may purge them.
    case caches
    /// Files needed briefly. Never backed up; remove them when done.
    case temporary

    /// Whether files of this role are ever backed up.
    public var isBackedUp: Bool { self == .documents || self == .applicationSupport }

    /// Whether the role's directory is private to the app (0700 on Linux).
    public var isPrivate: Bool { self != .documents }
}
