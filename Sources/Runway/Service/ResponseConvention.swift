/// How a service says "success" or "business error" inside a 2xx response.
///
/// Many providers answer every call with HTTP 200 and put the outcome in the body, for example
/// `{"code":0,"data":…}` for success and `{"code":1001,"message":"…"}` for a refused
/// operation. A convention reads that envelope, off the main actor, after the status check and
/// before the API's response validator.
public protocol ResponseConvention: Sendable {
    /// Checks a 2xx response.
    ///
    /// - parameter response: The landed response; its ``RawResponse/json`` is already parsed
    ///   when the API expects JSON.
    /// - throws: ``RunwayError/business(code:message:)`` for a business error, or
    ///   ``RunwayError/invalidResponse(reason:)`` when the envelope is malformed.
    func check(_ response: RawResponse) throws(RunwayError)
}

/// The convention of a service whose HTTP status alone tells success: every 2xx succeeds.
public struct StatusOnlyConvention: ResponseConvention {
    public init() {}
    public func check(_ response: RawResponse) throws(RunwayError) {}
}

/// The common envelope `{"code": 0, "message": "…", "data": …}`.
///
/// `code` equal to ``successCode`` is success; any other code is a
/// ``RunwayError/business(code:message:)`` carrying the message. A body without an integer code
/// is an invalid response.
public struct CodeEnvelopeConvention: ResponseConvention {
    /// The member holding the business code.
    public var codeKey: String
    /// The member holding the message that goes with a failure.
    public var messageKey: String
    /// The code that means success.
    public var successCode: Int

    /// Creates the convention with its member names and success code.
    public init(codeKey: String = "code", messageKey: String = "message", successCode: Int = 0) {
        self.codeKey = codeKey
        self.messageKey = messageKey
        self.successCode = successCode
    }

    /// Checks the envelope. A ``ResponseFormat/raw`` API's body was not parsed at landing; it is
    /// parsed here for the check (off the main actor, as landing is) and the tree dropped, so the
    /// service's business errors reach that API too.
    public func check(_ response: RawResponse) throws(RunwayError) {
        let parsed: JSON? = if let json = response.json { json } else { try? JSONParser.parse(response.body) }
        guard let json = parsed else {
            throw .invalidResponse(reason: "the service's envelope needs a JSON body")
        }
        guard let code = json[codeKey]?.intValue else {
            throw .invalidResponse(reason: "the envelope has no integer \"\(codeKey)\"")
        }
        guard code == successCode else {
            throw .business(code: code, message: json[messageKey]?.stringValue ?? "")
        }
    }
}

extension ResponseConvention where Self == StatusOnlyConvention {
    /// Every 2xx response succeeds.
    public static var statusOnly: StatusOnlyConvention { StatusOnlyConvention() }
}

extension ResponseConvention where Self == CodeEnvelopeConvention {
    /// `{"code": 0, "message": "…"}`-style envelopes; see ``CodeEnvelopeConvention``.
    public static func codeEnvelope(
        codeKey: String = "code", messageKey: String = "message", successCode: Int = 0
    ) -> CodeEnvelopeConvention {
        CodeEnvelopeConvention(codeKey: codeKey, messageKey: messageKey, successCode: successCode)
    }
}
