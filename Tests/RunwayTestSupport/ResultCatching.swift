extension Result where Failure == any Error {
    /// The outcome of `body`, returned or thrown.
    public init(_ body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
