/// What the device's network looks like now: whether anything beyond this machine is
/// reachable, through which kinds of interface, and whether the path costs the user money or is
/// in a low-data mode (where the platform knows).
public struct NetworkPath: Sendable, Hashable, CustomStringConvertible {
    /// A kind of network interface.
    public enum Interface: String, Sendable, Hashable {
        case wifi
        case cellular
        case wired
        case other
    }

    /// Whether anything beyond this device can be reached: on Linux, an interface other than
    /// loopback is up with a routable address (with or without a default route: a destination
    /// no route reaches is refused by the kernel at connect, at once); on Apple platforms, the
    /// path is satisfied or comes up when a connection asks for it (`.requiresConnection`).
    public var isReachable: Bool
    /// The kinds of the interfaces that are up, each once, most preferred first.
    public var interfaces: [Interface]
    /// Whether the path is metered (cellular, a personal hotspot).
    public var isExpensive: Bool
    /// Whether the user asked to save data (Low Data Mode).
    public var isConstrained: Bool

    /// Creates a path.
    public init(isReachable: Bool, interfaces: [Interface], isExpensive: Bool = false, isConstrained: Bool = false) {
        self.isReachable = isReachable
        self.interfaces = interfaces
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
    }

    /// No network.
    public static let unreachable = NetworkPath(isReachable: false, interfaces: [])
    /// A wired network, neither expensive nor constrained.
    public static let wired = NetworkPath(isReachable: true, interfaces: [.wired])

    public var description: String {
        guard isReachable else { return "unreachable" }
        var text = interfaces.map(\.rawValue).joined(separator: "+")
        if isExpensive { text += ", expensive" }
        if isConstrained { text += ", constrained" }
        return text
    }
}
