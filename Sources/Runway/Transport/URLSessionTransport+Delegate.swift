import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Security)
import Security
#endif

/// The delegate of a ``URLSessionTransport``'s session: it refuses every redirect (the engine
/// owns them, re-checking each hop), lands every HTTP authentication challenge as the 401 it
/// came with (``Authentication`` answers those), and, on Apple platforms, checks each request's
/// public-key pins.
final class SessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    /// Exchanges in flight, by task identifier: their callbacks come here.
    private let exchanges = Locked<[Int: ExchangeTask]>([:])
    #if canImport(FoundationNetworking)
    /// The session's delegate queue: calls into the session from a callback go through it.
    private let callbacks: DispatchedDelegateQueue

    init(callbacks: DispatchedDelegateQueue) {
        self.callbacks = callbacks
    }
    #endif

    func register(_ exchange: ExchangeTask, for identifier: Int) {
        exchanges.withLock { $0[identifier] = exchange }
    }

    func exchange(_ identifier: Int) -> ExchangeTask? {
        exchanges.withLock { $0[identifier] }
    }

    func removeExchange(_ identifier: Int) -> ExchangeTask? {
        exchanges.withLock { $0.removeValue(forKey: identifier) }
    }

    /// Hands the 3xx back as the response: the engine decides whether and how to follow it.
    /// A task cancelled meanwhile gets no answer (``DataTaskHandle/answerRedirect(_:)``).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let exchange = exchange(task.taskIdentifier) else { return completionHandler(nil) }
        exchange.handle.answerRedirect { completionHandler(nil) }
    }

    /// An HTTP authentication challenge (`WWW-Authenticate: Basic …`) is never answered here:
    /// the app's ``Authentication`` owns credentials, so the 401 lands as the response it is.
    /// A server-trust challenge is evaluated by the system, then checked against the host's pins.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Security)
        if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust {
            serverTrust(challenge, task: task, completionHandler: completionHandler)
            return
        }
        // The session has no credential storage, so default handling lands the 401.
        completionHandler(.performDefaultHandling, nil)
        #else
        // Only HTTP challenges come here (this URLSession leaves server trust to the system's
        // TLS library). It raises one once the whole 401 has arrived, and then either waits for
        // a credential it never gets or cancels: the 401 is kept as the exchange's outcome, and
        // the task is cancelled to end the wait — on a queue of its own, since that cancellation
        // waits for the session's work queue, which may be waiting for this queue (see
        // ``DispatchedDelegateQueue``).
        if let response = challenge.failureResponse as? HTTPURLResponse {
            exchange(task.taskIdentifier)?.challenged(by: response)
        }
        callbacks.callSession { completionHandler(.cancelAuthenticationChallenge, nil) }
        #endif
    }

    #if canImport(Security)
    /// Evaluates the chain as the system does, then asks the request's pins whether the
    /// validated chain's keys satisfy them (``PublicKeyPins/accepts(chain:)``: the one rule).
    private func serverTrust(
        _ challenge: URLAuthenticationChallenge, task: URLSessionTask,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let pinned = self.exchange(task.taskIdentifier)
        guard let trust = challenge.protectionSpace.serverTrust, let hostPins = pinned?.pins else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        guard SecTrustEvaluateWithError(trust, nil),
            let chain = SecTrustCopyCertificateChain(trust) as? [SecCertificate],
            hostPins.accepts(chain: chain.map { Self.spki(of: $0) ?? [] })
        else {
            pinned?.refusedByPin()
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        completionHandler(.useCredential, URLCredential(trust: trust))
    }

    /// The SubjectPublicKeyInfo DER of a certificate's key, for the key types pins cover.
    static func spki(of certificate: SecCertificate) -> [UInt8]? {
        guard let key = SecCertificateCopyKey(certificate),
            let attributes = SecKeyCopyAttributes(key) as? [CFString: Any],
            let type = attributes[kSecAttrKeyType] as? String,
            let size = attributes[kSecAttrKeySizeInBits] as? Int,
            let raw = SecKeyCopyExternalRepresentation(key, nil) as Data?
        else { return nil }
        let isEC = type == (kSecAttrKeyTypeECSECPrimeRandom as String)
        let isRSA = type == (kSecAttrKeyTypeRSA as String)
        let header: [UInt8]
        if isEC, size == 256 {
            header = [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A,
                      0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00]
        } else if isEC, size == 384 {
            header = [0x30, 0x76, 0x30, 0x10, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x05, 0x2B,
                      0x81, 0x04, 0x00, 0x22, 0x03, 0x62, 0x00]
        } else if isRSA, size == 2048 {
            header = [0x30, 0x82, 0x01, 0x22, 0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01,
                      0x01, 0x05, 0x00, 0x03, 0x82, 0x01, 0x0F, 0x00]
        } else if isRSA, size == 4096 {
            header = [0x30, 0x82, 0x02, 0x22, 0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01,
                      0x01, 0x05, 0x00, 0x03, 0x82, 0x02, 0x0F, 0x00]
        } else {
            return nil
        }
        return header + [UInt8](raw)
    }
    #endif
}
