/// Whose nonce it is: the key that signed the request and, when the request names one in a
/// signed header field, the device that sent it. Quotas are counted per key and per device of a
/// key, so one holder's flood fills its own share of the store, not everyone's.
public struct NonceHolder: Sendable, Hashable {
    /// A level a quota is counted at.
    public enum Level: String, Sendable, Hashable {
        /// Every request signed with one key id.
        case key
        /// Every request of one key id that names one device.
        case device
    }

    /// The key id that signed the request.
    public var keyID: String
    /// The device the request named in a signed field, if it named one.
    public var device: String?

    /// A holder.
    public init(keyID: String, device: String? = nil) {
        self.keyID = keyID
        self.device = device
    }
}

/// How many live nonces one holder may hold: a key's (every client that signs with it) and a
/// device's (every request of one key that names that device in a signed field).
///
/// An app usually ships one key in every install, so the key's quota is off by default (every
/// install shares it) and the device's is what keeps one install's flood its own problem.
/// Servers with a key per partner set ``perKey``. A request without a device field counts
/// against its key's quota only. A device id is only as trustworthy as the key: a holder of an
/// extracted app key can name a new device per request, which the key's quota then bounds.
public struct NonceQuota: Sendable, Hashable {
    /// The most live nonces of one key id; `nil`: no limit but the store's capacity.
    public var perKey: Int?
    /// The most live nonces of one device of a key; `nil`: no limit but the key's.
    public var perDevice: Int?

    /// Quotas; none by default.
    public init(perKey: Int? = nil, perDevice: Int? = nil) {
        self.perKey = perKey.map { max($0, 1) }
        self.perDevice = perDevice.map { max($0, 1) }
    }

    /// A device's share of a store of `capacity`: 1 % (at the default capacity, 7,500 nonces —
    /// 25 signed requests a second for 300 s), and no quota per key.
    public static func `default`(capacity: Int) -> NonceQuota {
        NonceQuota(perDevice: max(capacity / 100, 1))
    }
}
