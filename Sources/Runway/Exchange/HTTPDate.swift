import Foundation

/// The HTTP date of RFC 9110 §5.6.7: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the one
/// form a sender may use, and the two obsolete forms a recipient must also accept — RFC 850
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
///
/// Parsed by hand, so no shared formatter is touched from many threads and no locale applies.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The instant `text` names, or `nil` when it is none of the three forms.
    static func parse(_ text: String) -> Date? {
        // Optional whitespace around a field value is spaces and tabs (RFC 9110 §5.6.3); trimmed
        // without Foundation, which bridges to `NSString` for it on every answer.
        var trimmed = Substring(text)
        while let first = trimmed.first, first == " " || first == "\t" { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, last == " " || last == "\t" { trimmed = trimmed.dropLast() }
        let parts = trimmed.split(separator: " ")
        if parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT", parts[1].count == 2,
            let day = Int(parts[1]), let year = Int(parts[3]), parts[3].count == 4
        {
            return instant(year: year, month: String(parts[2]), day: day, clock: parts[4])
        }
        if parts.count == 4, parts[0].hasSuffix(","), parts[3] == "GMT" {
            // RFC 850: a two-digit year is within 50 years of now, in practice 19xx or 20xx.
            let date = parts[1].split(separator: "-")
            guard date.count == 3, date[0].count == 2, date[2].count == 2, let day = Int(date[0]), let short = Int(date[2])
            else { return nil }
            return instant(year: short < 70 ? 2000 + short : 1900 + short, month: String(date[1]), day: day, clock: parts[2])
        }
        if parts.count == 5, parts[0].count == 3, let day = Int(parts[2]), (1...2).contains(parts[2].count),
            let year = Int(parts[4]), parts[4].count == 4
        {
            return instant(year: year, month: String(parts[1]), day: day, clock: parts[3])
        }
        return nil
    }

    private static func instant(year: Int, month: String, day: Int, clock: Substring) -> Date? {
        guard let monthIndex = months.firstIndex(of: month), (1...31).contains(day), (1...9999).contains(year) else {
            return nil
        }
        let fields = clock.split(separator: ":")
        guard fields.count == 3, fields.allSatisfy({ $0.count == 2 }),
            let hour = Int(fields[0]), let minute = Int(fields[1]), let second = Int(fields[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = daysSinceEpoch(year: year, month: monthIndex + 1, day: day)
        return Date(timeIntervalSince1970: TimeInterval(((days * 24 + hour) * 60 + minute) * 60 + second))
    }

    /// Days from 1970-01-01 to the given day of the proleptic Gregorian calendar
    /// (Howard Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
