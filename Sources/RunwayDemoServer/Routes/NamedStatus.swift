import HTTPTypes

extension HTTPResponse.Status {
    /// The status a client named in a demo route's path or query, if an HTTP answer can carry it
    /// (100–999). A client's number is input: `Status(code:)` stops the process on another.
    init?(named code: Int?) {
        guard let code, (100...999).contains(code) else { return nil }
        self.init(code: code)
    }
}
