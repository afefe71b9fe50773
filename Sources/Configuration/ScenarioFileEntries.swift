import EMV3DS
import JSON
import Yams

// The scenario file as YAML gives it: one entry type per mapping, each key bound to a member.
extension ScenarioFile {
    // Each section is read by its table of keys (``KeyTableDecodable``): unknown keys fail.
    struct Document: KeyTableDecodable {
        var defaultScenario = ""
        var scenarios: [Entry] = []

        static var keys: [TableKey<Self>] {
            [.key("defaultScenario", \.defaultScenario, required: true), .key("scenarios", \.scenarios, required: true)]
        }
    }

    struct Entry: KeyTableDecodable {
        var name = ""
        var pan: String?
        var description = ""
        var transStatus: String?
        var transStatusReason: String?
        var challenge: ChallengeEntry?
        var decoupled: DecoupledEntry?
        var panRange: String?
        var amount: String?
        var messageCategory: String?
        var faults: [FaultEntry]?
        var expect: ExpectEntry?
        var threeDSMethod: ThreeDSMethodEntry?
        var spc: SPCEntry?
        var outcomeFields: [String: YAMLJSON]?

        static var keys: [TableKey<Self>] {
            [.key("name", \.name, required: true), .key("pan", \.pan), .key("description", \.description, required: true),
             .key("transStatus", \.transStatus), .key("transStatusReason", \.transStatusReason), .key("challenge", \.challenge),
             .key("decoupled", \.decoupled), .key("panRange", \.panRange), .key("amount", \.amount),
             .key("messageCategory", \.messageCategory), .key("faults", \.faults), .key("expect", \.expect),
             .key("threeDSMethod", \.threeDSMethod), .key("spc", \.spc), .key("outcomeFields", \.outcomeFields)]
        }
    }

    /// `spc`: Secure Payment Confirmation first (2.3.1, browser), the scenario's outcome as its fallback.
    struct SPCEntry: KeyTableDecodable {
        var transStatus: String?
        var displayName: String?

        static var keys: [TableKey<Self>] { [.key("transStatus", \.transStatus), .key("displayName", \.displayName)] }
    }

    /// `threeDSMethod`: `url: none`, `notifyAfter` (seconds, or never), `unlessCompleted` (a scenario's name).
    struct ThreeDSMethodEntry: KeyTableDecodable {
        var url: String?
        var notifyAfter: Double?
        var neverNotifies = false
        var unlessCompleted: String?

        static var keys: [TableKey<Self>] {
            [.key("url", \.url), .key("unlessCompleted", \.unlessCompleted),
             // A number of seconds, or "never".
             TableKey("notifyAfter") { entry, container, key in
                 if (try? container.decodeIfPresent(String.self, forKey: key)) == "never" {
                     entry.neverNotifies = true
                 } else {
                     entry.notifyAfter = try container.decodeIfPresent(Double.self, forKey: key)
                 }
             }]
        }
    }

    struct FaultEntry: KeyTableDecodable {
        var leg = ""
        var fault = ""
        var value: String?
        var round: Int?

        static var keys: [TableKey<Self>] {
            [.key("leg", \.leg, required: true), .key("fault", \.fault, required: true), .key("value", \.value), .key("round", \.round)]
        }
    }

    struct ExpectEntry: KeyTableDecodable {
        var sdk: String?
        var sdkErro: String?
        var threeDSServer: String?
        var text = ""

        static var keys: [TableKey<Self>] {
            [.key("sdk", \.sdk), .key("sdkErro", \.sdkErro), .key("threeDSServer", \.threeDSServer), .key("text", \.text, required: true)]
        }
    }

    struct ChallengeEntry: KeyTableDecodable {
        var steps: [StepEntry] = []
        var attempts: Int?
        var success: String?
        var failureStatus: String?
        var failureReason: String?
        var whitelisting: String?
        var cardholder: String?
        var decoupledFallback: DecoupledFallbackEntry?

        static var keys: [TableKey<Self>] {
            [.key("steps", \.steps, required: true), .key("attempts", \.attempts), .key("success", \.success),
             .key("failureStatus", \.failureStatus), .key("failureReason", \.failureReason), .key("whitelisting", \.whitelisting),
             .key("cardholder", \.cardholder), .key("decoupledFallback", \.decoupledFallback)]
        }
    }

    /// `challenge.decoupledFallback` (2.3.1): `reason` 30 after the steps pass or 29 after the attempts run out, the
    /// information screen's `text`, and the `decoupled` authentication of the 3RI AReq that follows.
    struct DecoupledFallbackEntry: KeyTableDecodable {
        var reason = ""
        var text: String?
        var decoupled: DecoupledEntry?

        static var keys: [TableKey<Self>] {
            [.key("reason", \.reason, required: true), .key("text", \.text), .key("decoupled", \.decoupled)]
        }
    }

    struct OptionEntry: KeyTableDecodable {
        var key = ""
        var label = ""

        static var keys: [TableKey<Self>] { [.key("key", \.key, required: true), .key("label", \.label, required: true)] }
    }

    struct ImageEntry: KeyTableDecodable {
        var medium: String?
        var high: String?
        var extraHigh: String?

        static var keys: [TableKey<Self>] { [.key("medium", \.medium), .key("high", \.high), .key("extraHigh", \.extraHigh)] }

        var json: JSONValue { .object(omittingAbsent: [("medium", .string(medium)), ("high", .string(high)), ("extraHigh", .string(extraHigh))]) }
    }

    struct StepEntry: KeyTableDecodable {
        var uiType = ""
        var answer: String?
        var resendAnswer: String?
        var errorText: String?
        /// The screen's texts, by key.
        var texts: [TextKey: String] = [:]
        var options: [OptionEntry]?
        var issuerImage: ImageEntry?
        var psImage: ImageEntry?

        enum TextKey: String, CaseIterable {
            case header, label, text, additionalInfo, submitLabel, oobContinueLabel, oobAppURL, oobAppLabel, html, htmlRefresh
            case expandInfoLabel, expandInfoText, whyInfoLabel, whyInfoText, resendLabel
        }

        static var keys: [TableKey<Self>] {
            [.key("uiType", \.uiType, required: true), .key("answer", \.answer), .key("resendAnswer", \.resendAnswer),
             .key("errorText", \.errorText), .key("options", \.options), .key("issuerImage", \.issuerImage), .key("psImage", \.psImage)]
                + TextKey.allCases.map { text in .key(text.rawValue, \.texts[text]) }
        }
    }

    struct DecoupledEntry: KeyTableDecodable {
        var transStatus: String?
        var transStatusReason: String?
        var delay: Double?
        var never = false
        var cardholderInfo: String?

        static var keys: [TableKey<Self>] {
            [.key("transStatus", \.transStatus), .key("transStatusReason", \.transStatusReason), .key("cardholderInfo", \.cardholderInfo),
             // A number of seconds, or "never".
             TableKey("delay") { entry, container, key in
                 if (try? container.decodeIfPresent(String.self, forKey: key)) == "never" {
                     entry.never = true
                 } else {
                     entry.delay = try container.decodeIfPresent(Double.self, forKey: key)
                 }
             }]
        }
    }
}
