import Foundation
import Runway

// How the demo's story words what it measured: times, outcomes, where answers came from.

/// `value` with one decimal, for the story.
func oneDecimal(_ value: Double) -> String { String(format: "%.1f", value) }

/// A time for the story: two decimals below 10 ms, one below 1 s, seconds above.
func readable(milliseconds: Double) -> String {
    if milliseconds < 10 { return String(format: "%.2f ms", milliseconds) }
    if milliseconds < 1000 { return String(format: "%.1f ms", milliseconds) }
    return String(format: "%.1f s", milliseconds / 1000)
}

extension DemoChapter {
    /// A load's outcome in a few words: the status, or the error's message.
    static func describe(_ result: Result<RawResponse, RunwayError>) -> String {
        switch result {
        case .success(let response): "\(response.status.code)"
        case .failure(let error): error.localizedMessage()
        }
    }

    /// Where a response came from, in a word.
    static func origin(_ response: RawResponse) -> String {
        switch response.origin {
        case .network: "network"
        case .cache(let tier, _, let isStale): tier.rawValue + (isStale ? " (stale)" : "")
        case .revalidated(let tier): tier.rawValue + " (revalidated)"
        }
    }

    /// Milliseconds since a cached response was fetched.
    static func age(_ response: RawResponse) -> Double {
        if case .cache(_, let age, _) = response.origin { return age.milliseconds }
        return 0
    }
}

extension APIManager {
    /// A load's outcome as a value.
    func outcome(with params: Parameters) async -> Result<RawResponse, RunwayError> {
        do { return .success(try await load(with: params, reformedBy: .rawResponse)) } catch { return .failure(error) }
    }
}

extension Result where Failure == RunwayError {
    /// Whether this failed with the case `path` names (`\.paramsInvalid`).
    func isFailure(_ path: KeyPath<RunwayError, Bool>) -> Bool {
        guard case .failure(let error) = self else { return false }
        return error[keyPath: path]
    }
}

extension RunwayError {
    var paramsInvalid: Bool { if case .paramsInvalid = self { true } else { false } }
    var vetoed: Bool { if case .vetoed = self { true } else { false } }
}
