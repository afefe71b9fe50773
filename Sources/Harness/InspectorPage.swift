import Foundation
import JSON

/// The transaction inspector's page, from the page templates folder: `inspector.html` with
/// `inspector.css` and `inspector.js` put inline where its placeholders stand, so that it is one
/// page that fetches nothing from elsewhere, and a front-end engineer edits three plain files.
/// It reads `/inspector/transactions` (the list, filtered), `/inspector/transactions/{dsTransID}`
/// (one transaction whole) and `/inspector/events` (the live feed, server-sent events). Hash
/// routes: `#/` the list, `#/transactions/{dsTransID}` one transaction (what run reports link to).
struct InspectorPage: Sendable {
    static let pageFile = "inspector.html"
    static let styleFile = "inspector.css"
    static let scriptFile = "inspector.js"

    /// The page as served; nil when a file is missing (``missing`` says which).
    let html: [UInt8]?
    let missing: String?

    init(folder: String) {
        func read(_ name: String) -> String? { try? String(contentsOfFile: folder + "/" + name, encoding: .utf8) }
        let files = [Self.pageFile, Self.styleFile, Self.scriptFile].map { ($0, read($0)) }
        if let absent = files.first(where: { $0.1 == nil })?.0 {
            html = nil
            missing = "the inspector's \(absent) is not in the page templates folder (accessControlServer.pageTemplates, config/templates by default)"
            return
        }
        let (page, style, script) = (files[0].1 ?? "", files[1].1 ?? "", files[2].1 ?? "")
        html = Array(Markup.render(page, text: [:], html: ["inspectorStyle": style, "inspectorScript": script]).utf8)
        missing = nil
    }
}
