/// Which deployment of a service an app talks to.
///
/// Each ``Service`` has a base URL per environment; switching environment (for a test build,
/// a release candidate) changes every API of that service at once.
public enum Environment: String, Sendable, Hashable, CaseIterable {
    /// The development servers.
    case develop
    /// The release-candidate (pre-production) servers.
    case releaseCandidate
    /// The production servers.
    case release
}
