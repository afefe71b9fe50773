import EMV3DS
import Foundation
import Scenarios
import Yams

/// The scenario file (`config/scenarios.yaml`): the named outcomes and their test PANs.
public enum ScenarioFile {
    struct Document: Decodable {
        var defaultScenario: String
        var scenarios: [Entry]

        private enum CodingKeys: String, CodingKey, CaseIterable { case defaultScenario, scenarios }

        init(from decoder: Decoder) throws {
            let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
            defaultScenario = try container.decode(String.self, forKey: .defaultScenario)
            scenarios = try container.decode([Entry].self, forKey: .scenarios)
        }
    }

    struct Entry: Decodable {
        var name: String
        var pan: String?
        var description: String
        var transStatus: String
        var transStatusReason: String?

        private enum CodingKeys: String, CodingKey, CaseIterable { case name, pan, description, transStatus, transStatusReason }

        init(from decoder: Decoder) throws {
            let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            pan = try container.decodeIfPresent(String.self, forKey: .pan)
            description = try container.decode(String.self, forKey: .description)
            transStatus = try container.decode(String.self, forKey: .transStatus)
            transStatusReason = try container.decodeIfPresent(String.self, forKey: .transStatusReason)
        }
    }

    /// Reads and checks a scenario file.
    public static func load(path: String) throws(ConfigurationError) -> ScenarioCatalog {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw .unreadable(path: path) }
        return try parse(text, source: path)
    }

    /// Parses scenario YAML; errors name `source`, the scenario and the field.
    public static func parse(_ text: String, source: String = "scenarios") throws(ConfigurationError) -> ScenarioCatalog {
        let document: Document
        do { document = try YAMLDecoder().decode(Document.self, from: text) } catch let error as DecodingError {
            throw .invalid(source: source, reason: error.readableDescription)
        } catch {
            throw .invalid(source: source, reason: "\(error)")
        }
        var scenarios: [Scenario] = []
        for (index, entry) in document.scenarios.enumerated() {
            func invalid(_ field: String, _ reason: String) -> ConfigurationError {
                .invalid(source: source, reason: "scenarios[\(index)] (\(entry.name)).\(field): \(reason)")
            }
            if let pan = entry.pan, !((13...19).contains(pan.count) && CardNumber.isLuhnValid(pan)) {
                throw invalid("pan", "\"\(pan)\" is not a 13-19 digit Luhn-valid card number")
            }
            let frictionless: [TransStatus] = [.authenticated, .attempted, .notAuthenticated, .rejected, .unavailable, .informational]
            guard let status = TransStatus(rawValue: entry.transStatus), frictionless.contains(status) else {
                throw invalid("transStatus", "\"\(entry.transStatus)\" is not one of \(frictionless.map(\.rawValue).joined(separator: ", "))")
            }
            if let reason = entry.transStatusReason {
                guard reason.count == 2, reason.allSatisfy(\.isNumber) else { throw invalid("transStatusReason", "\"\(reason)\" is not two digits") }
                guard status.carriesReason else { throw invalid("transStatusReason", "only N, R and U carry a reason") }
            } else if status.carriesReason {
                throw invalid("transStatusReason", "required for transStatus \(status.rawValue)")
            }
            scenarios.append(Scenario(name: entry.name, pan: entry.pan, description: entry.description,
                                      outcome: .frictionless(status, reason: entry.transStatusReason)))
        }
        do { return try ScenarioCatalog(scenarios: scenarios, fallbackName: document.defaultScenario) } catch {
            throw .invalid(source: source, reason: error.description)
        }
    }
}
