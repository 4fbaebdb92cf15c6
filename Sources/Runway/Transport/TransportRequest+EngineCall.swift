extension TransportRequest {
    /// For the benchmarks: marks the request as the engine marks an API call's — its
    /// ``responseSink`` keeps bytes in memory and never blocks, and the caller ends the exchange
    /// through ``cancellation`` at its deadline — so that a transport's own path for such a call
    /// can be measured without the engine (`Benchmarks/README.md`). Set a ``cancellation`` too.
    @_spi(Benchmarks) public mutating func markAsEngineAPICall() {
        sinkKeepsInMemory = true
        deadlineWatched = true
    }
}
