extension JSON {
    /// Whether the value's compact encoding is certainly longer than `limit` bytes, found
    /// without encoding it: every string, key, bracket, colon and comma counted at its fewest
    /// bytes (escapes only add), stopping as soon as the count passes `limit`. A size check that
    /// must refuse an 8 MB string should not first escape and copy it.
    package func encodingCertainlyExceeds(_ limit: Int) -> Bool {
        var count = 0
        return JSON.countFewestBytes(self, into: &count, limit: limit)
    }

    /// Adds the fewest bytes `value` encodes to; `true` once the total passes `limit`.
    private static func countFewestBytes(_ value: JSON, into count: inout Int, limit: Int) -> Bool {
        switch value {
        case .null: count += 4
        case .bool(let flag): count += flag ? 4 : 5
        case .int, .double: count += 1
        case .bigInteger(let digits): count += digits.utf8.count
        case .string(let text): count += text.utf8.count + 2
        case .array(let elements):
            count += 2 + max(elements.count - 1, 0)
            for element in elements where countFewestBytes(element, into: &count, limit: limit) { return true }
        case .object(let members):
            count += 2 + max(members.count - 1, 0)
            for (key, member) in members {
                count += key.utf8.count + 3
                if countFewestBytes(member, into: &count, limit: limit) { return true }
            }
        }
        return count > limit
    }
}
