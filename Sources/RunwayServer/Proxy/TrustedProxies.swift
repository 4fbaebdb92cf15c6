import Foundation
public import NIOCore

/// The addresses of the proxies in front of the server — a TLS-terminating load balancer —
/// whose word on the scheme and authority a client used (``ForwardedRequest``) is believed.
///
/// Each entry is an address (`10.0.0.5`, `::1`) or a CIDR block (`10.0.0.0/8`, `fd00::/8`).
/// A request from any other address is taken as it arrived, whatever forwarding fields it
/// carries.
public struct TrustedProxies: Sendable, Hashable {
    /// One address block.
    struct Block: Sendable, Hashable {
        var bytes: [UInt8]
        var prefix: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var left = prefix
            for (a, b) in zip(address, bytes) {
                guard left > 0 else { return true }
                let bits = min(left, 8)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != b & mask { return false }
                left -= bits
            }
            return true
        }
    }

    /// Why an entry is not an address or a block.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        /// The entry as given.
        public var entry: String
        public var description: String { "\(entry) is not an IP address or a CIDR block such as 10.0.0.0/8" }
    }

    let blocks: [Block]

    /// No proxy is trusted: every request is taken as it arrived.
    public static let none = TrustedProxies(blocks: [])

    private init(blocks: [Block]) { self.blocks = blocks }

    /// The proxies at `entries`, each an address or a CIDR block.
    ///
    /// - throws: ``ParseError`` naming the first entry that is neither.
    public init(_ entries: [String]) throws(ParseError) {
        var blocks: [Block] = []
        for entry in entries {
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = parts.first.flatMap({ Self.bytes(of: String($0)) }) else { throw ParseError(entry: entry) }
            let width = address.count * 8
            var prefix = width
            if parts.count == 2 {
                guard let given = Int(parts[1]), (0...width).contains(given) else { throw ParseError(entry: entry) }
                prefix = given
            }
            blocks.append(Block(bytes: address, prefix: prefix))
        }
        self.blocks = blocks
    }

    /// Whether `address` is one of the trusted proxies'. An IPv4 address mapped into IPv6
    /// (`::ffff:10.0.0.5`, what a dual-stack socket reports) is taken as the IPv4 one.
    public func contains(_ address: SocketAddress?) -> Bool {
        guard !blocks.isEmpty, let text = address?.ipAddress, var bytes = Self.bytes(of: text) else { return false }
        if bytes.count == 16, bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] { bytes = Array(bytes.suffix(4)) }
        return blocks.contains { $0.contains(bytes) }
    }

    /// The address's bytes: 4 for IPv4, 16 for IPv6; `nil` when it is neither.
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
