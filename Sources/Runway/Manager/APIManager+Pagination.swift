extension APIManager where Endpoint: PagedAPI {
    /// Whether the last page has landed; ``loadNextPage()`` then does nothing.
    public var isLastPage: Bool { paging.isLastPage }

    /// The last page that landed, `nil` before the first.
    public var currentPage: PageRequest? { paging.current }

    /// Loads the first page, resetting the bookkeeping (pull to refresh, new filters).
    ///
    /// A page load still in flight is cancelled and delivered as ``RunwayError/cancelled``.
    ///
    /// - parameter params: The listing's params (filters), sent with every page; `nil` asks the
    ///   ``paramSource``.
    /// - returns: The load's identifier.
    @discardableResult
    public func loadFirstPage(with params: Parameters? = nil) -> LoadID? {
        resetPaging(params)
        return startPage(api.firstPage, notifiesDelegate: true, waiter: nil)
    }

    /// Loads the page after the last one that landed.
    ///
    /// - returns: `nil`, doing nothing, when the last page has landed or a page is already in
    ///   flight (so overlapping calls neither skip nor repeat a page).
    @discardableResult
    public func loadNextPage() -> LoadID? {
        guard paging.started else { return loadFirstPage() }
        guard paging.loading == nil, !paging.isLastPage, let next = paging.next else { return nil }
        return startPage(next, notifiesDelegate: true, waiter: nil)
    }

    /// Loads the first page and returns it: the `async` form of ``loadFirstPage(with:)``.
    @discardableResult
    public func firstPage(with params: Parameters? = nil) async throws(RunwayError) -> RawResponse {
        resetPaging(params)
        let waiter = Waiter()
        startPage(api.firstPage, notifiesDelegate: false, waiter: waiter)
        return try await wait(for: waiter).get()
    }

    /// Loads the next page and returns it: the `async` form of ``loadNextPage()``; `nil` when
    /// there is none to load or a page is already in flight.
    @discardableResult
    public func nextPage() async throws(RunwayError) -> RawResponse? {
        guard paging.started else { return try await firstPage() }
        guard paging.loading == nil, !paging.isLastPage, let next = paging.next else { return nil }
        let waiter = Waiter()
        startPage(next, notifiesDelegate: false, waiter: waiter)
        return try await wait(for: waiter).get()
    }

    private func resetPaging(_ params: Parameters?) {
        if let loading = paging.loading, let entry = state.withLock({ $0.book.finish(loading) }) {
            // Superseded by the refresh: delivered as cancelled, its late landing dropped.
            cancelAndDeliver(loading, entry)
        }
        paging = PagingState(next: api.firstPage, baseParams: resolve(params), started: true)
    }

    @discardableResult
    private func startPage(_ page: PageRequest, notifiesDelegate: Bool, waiter: Waiter?) -> LoadID? {
        var params = paging.baseParams
        params.merge(api.params(for: page)) { _, pageValue in pageValue }
        let api = self.api
        // Read in the load's own task, off the main actor: a `.raw` page's body is parsed there.
        let following = Locked<PageRequest?>(nil)
        // The load's id, known once `begin` returns: what the finish hook checks it is still the page loading.
        let started = Locked<LoadID?>(nil)
        let id = begin(
            params: params, strategy: .allowConcurrent, notifiesDelegate: notifiesDelegate, waiter: waiter,
            beforeLanding: { result in
                if case .success(let response) = result {
                    let next = api.nextPage(after: page, response: response)
                    following.withLock { $0 = next }
                }
            },
            onFinish: { [weak self] result in
                guard let self, self.paging.loading == started.withLock({ $0 }) else { return }
                self.paging.loading = nil
                if case .success = result {
                    self.paging.current = page
                    self.paging.next = following.withLock { $0 }
                    self.paging.isLastPage = self.paging.next == nil
                }
            })
        started.withLock { $0 = id }
        paging.loading = id
        return id
    }
}
