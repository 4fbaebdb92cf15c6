import Foundation

extension OperationLog {
    /// What the collector's answer means for a batch: only a transient failure is worth
    /// sending the same batch again.
    enum Answer: Sendable {
        /// 2xx: stored, but for the events listed as refused (their indices in the batch).
        case stored(refused: [RefusedEvent])
        /// 413: too large; the collector's stated event limit, if it gave one.
        case tooLarge(statedLimit: Int?)
        /// 400 or 422: the batch is malformed and never will be stored.
        case refused
        /// Anything else: worth trying again later.
        case failed(RunwayError, retryAfter: Duration?)

        /// The answer an upload that failed with `failure` stands for.
        init(failure: RunwayError, retryAfter: Duration?) {
            switch failure {
            case .httpStatus(413, let body):
                let stated = (try? JSON(parsing: body)).flatMap { json -> Int? in
                    json["reason"]?.stringValue == "too_many_events" ? json["limit"]?.intValue : nil
                }
                self = .tooLarge(statedLimit: stated)
            case .httpStatus(400, _), .httpStatus(422, _):
                self = .refused
            default:
                self = .failed(failure, retryAfter: retryAfter)
            }
        }
    }

    /// One event the collector refused, as its answer names it.
    struct RefusedEvent: Hashable, Sendable {
        var index: Int
        var field: String
        var reason: String
    }

    /// The events a collector's 2xx lists as refused: `{"refused": [{"index": i, "field": f, "reason": r}]}`.
    /// Entries outside the batch, or repeated, are ignored.
    static func refusedEvents(in body: Data, count: Int) -> [RefusedEvent] {
        guard let list = (try? JSON(parsing: body))?["refused"]?.arrayValue else { return [] }
        var seen = Set<Int>()
        return list.compactMap { entry in
            guard let index = entry["index"]?.intValue, (0..<count).contains(index), seen.insert(index).inserted else {
                return nil
            }
            return RefusedEvent(
                index: index, field: entry["field"]?.stringValue ?? "event", reason: entry["reason"]?.stringValue ?? "")
        }
    }
}
