import EMV3DS
import EMVCrypto
import EventLoops
import Foundation
import JOSE
import JSON
import Messaging
import Net
import SDKSimulator
import Synchronization
import Testing
import TestSupport

/// Three instances on a shared PostgreSQL behind HAProxy in round robin (docs/scale.md): each later message
/// of a transaction reaches the instance that holds it, whichever instance the balancer chose.
@Suite("A cluster behind a load balancer", .serialized, .enabled(if: HarnessCluster.missing == nil, Comment(rawValue: HarnessCluster.missing ?? "")))
struct ClusterTests {
    /// An app challenge (challenge-text, 2.2.0) begun through the first instance: its SDK and the challenge's parameters.
    private func challengeBegunAtTheFirstInstance(_ cluster: HarnessCluster) async throws -> (SimulatedSDKTransaction, ChallengeParameters) {
        let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
        let started = try await Simulator(client: cluster.client, baseURL: cluster.instances[0].url).authenticate(sdk, pan: "4000000000110009")
        return (sdk, try #require(ChallengeParameters(record: started.record)))
    }

    /// Two CReqs of one challenge, sent to two instances at once, reach the one instance that holds the
    /// challenge: one is answered with the CRes, the other refused as a replayed counter (Erro 302,
    /// sdkCounterStoA), never both answered.
    @Test func twoCReqsOfOneChallengeAtTwoInstancesAtOnceAreAnsweredOnce() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        // Begun at the first instance, which holds it from then on.
        let (sdk, parameters) = try await challengeBegunAtTheFirstInstance(cluster)
        let content = try AcsSignedContent(verifying: parameters.acsSignedContent,
                                           with: CertificateVerifier(trustAnchors: [try pki.rootCertificate("A000000003")]))
        #expect(content.acsURL == cluster.publicURL + "/acs/challenge")
        let channel = try SecureChannel(privateKey: sdk.ephemeralKey, peerPublicKey: content.acsEphemPubKey,
                                        sdkReferenceNumber: SimulatedSDKTransaction.sdkReferenceNumber)
        let creq = CReq(messageVersion: sdk.messageVersion, threeDSServerTransID: parameters.threeDSServerTransID, acsTransID: parameters.acsTransID,
                        sdkTransID: sdk.sdkTransID, counter: 0, action: .none)
        let body = Array(try channel.seal(JSONWriter.write(creq.json), encryption: .a128cbcHS256, kid: parameters.acsTransID, direction: .sdkToACS).utf8)
        async let second = client.post(cluster.instances[1].url + "/acs/challenge", body: body, contentType: "application/jose; charset=UTF-8")
        async let third = client.post(cluster.instances[2].url + "/acs/challenge", body: body, contentType: "application/jose; charset=UTF-8")
        let answers = try await [second, third]
        let cres = answers.filter { $0.headers.mediaType == "application/jose" }
        let erros = answers.filter { $0.headers.mediaType == "application/json" }.compactMap { try? ErroMessage(json: try JSONReader.parse($0.body).value) }
        #expect(cres.count == 1 && erros.count == 1, "\(answers.map { "\($0.status.code) \($0.bodyText.prefix(200))" })")
        if let answer = cres.first {
            #expect(try CRes(bytes: try channel.open(answer.bodyText, direction: .acsToSDK).plaintext).counter == 0)
        }
        #expect(erros.first?.errorCode == .dataDecryptionFailure && erros.first?.errorDetail == "sdkCounterStoA", "\(erros)")
    }

    /// An SDK's Erro about a CRes is plain JSON, no JWE with a kid: it reaches the challenge's home by its acsTransID,
    /// which ends the challenge, wherever the balancer brought it.
    @Test func anSDKsErroPostedToAnotherInstanceEndsTheChallengeAtItsHome() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        let (sdk, parameters) = try await challengeBegunAtTheFirstInstance(cluster)
        let erro = ErroMessage(messageVersion: "2.2.0", errorCode: .formatInvalid, errorComponent: .sdk, errorDetail: "acsUiType",
                               errorMessageType: "CRes", threeDSServerTransID: parameters.threeDSServerTransID, acsTransID: parameters.acsTransID,
                               dsTransID: nil, sdkTransID: sdk.sdkTransID)
        let answer = try await client.post(cluster.instances[1].url + "/acs/challenge", body: JSONWriter.write(erro.json))
        #expect(answer.status == .ok, "\(answer.status.code) \(answer.bodyText)")
        let acs = try JSONReader.parse(try await client.get(cluster.instances[2].url + "/admin/acs/transactions/\(parameters.acsTransID)").body).value
        #expect(acs["phase"]?.stringValue == "ended" && acs["endedBecause"]?.stringValue?.contains("Erro") == true, "\(acs)")
    }

    /// The instances know each other's requests by the secret of their store: a request that says another instance sent
    /// it (`X-Harness-Forwarded-From`) without the secret, or with another, is an outside party's, and an instance-only route
    /// refuses it; with the store's secret it is served.
    @Test func aRequestClaimingToComeFromAnotherInstanceIsTrustedOnlyWithTheStoresSecret() async throws {
        let cluster = try await HarnessCluster.start(instances: 2, balanced: false)
        defer { cluster.stop() }
        let secret = try await cluster.psql("SELECT secret FROM harness_secret")
        #expect(secret.count >= 60, "the store's secret: \(secret)")
        let known = JSONWriter.write(.object([("home", .string(cluster.instances[1].url)), ("openedAtMs", .number("1800000000000")),
                                              ("keys", .array([]))]))
        let url = cluster.instances[0].url + "/admin/runs/run-from-outside/known"
        for presented in [nil, "not-the-secret", String(repeating: "0", count: secret.count)] {
            var headers: HTTPHeaders = ["X-Harness-Forwarded-From": cluster.instances[1].url, "Content-Type": "application/json"]
            if let presented { headers.set("X-Harness-Cluster-Secret", presented) }
            let refused = try await cluster.client.post(url, body: known, headers: headers)
            #expect(refused.status == .forbidden, "presented \(presented ?? "no secret"): \(refused.status.code) \(refused.bodyText)")
        }
        let served = try await cluster.client.post(url, body: known, headers: [
            "X-Harness-Forwarded-From": cluster.instances[1].url, "X-Harness-Cluster-Secret": secret, "Content-Type": "application/json"])
        #expect(served.status == .ok, "\(served.status.code) \(served.bodyText)")
    }

    /// A `kill -9` of one instance while transactions run through the balancer: every transaction answered
    /// before it is complete and readable through the balancer (from the store, where its home is gone).
    @Test func aKill9OfOneInstanceLosesNoAnsweredTransaction() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let simulate = try ChildProcess(harnessBinary, ["simulate", "--url", cluster.publicURL, "--all-frictionless"])
        try await offThePool {
            // A third of the way in, the second instance dies without a word.
            _ = simulate.awaitOutput(timeout: 120) { output in output.split(separator: "\n").count { $0.hasSuffix("[ok]") } >= 24 ? true : nil }
            cluster.instances[1].process.signal(SIGKILL)
            _ = cluster.instances[1].process.wait()
            _ = simulate.wait(timeout: 300)
        }
        let answered = simulate.output.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("  ") && line.contains(": 3DS Server") && line.hasSuffix("[ok]") ? String(line.dropFirst(2).prefix(36)) : nil
        }
        #expect(answered.count >= 24, "\(answered.count) answered: \(simulate.output.suffix(2000))")
        var unreadable: [String] = []
        for id in answered {
            let (status, body) = try await cluster.get(cluster.publicURL + "/3ds-server/transactions/\(id)")
            if status != "200" || !body.contains("\"transStatus\"") { unreadable.append(id) }
        }
        #expect(unreadable.isEmpty, "\(unreadable.count) of \(answered.count) answered transactions cannot be read: \(unreadable.prefix(3))")
    }

    /// A test run started through the balancer lives at the instance that took it, and takes its cases' transactions
    /// wherever they land: the AReqs below reach the three instances, and the run, read through the balancer, has each
    /// in its case. A challenge left open at another instance is graded from that instance's memory (the store has its
    /// record once it ends): running while the run is open, failed when it finishes, never a record "neither in memory nor in the store". When the
    /// run's home dies, the instance that a later transaction reaches takes the run up from the store and attaches it;
    /// an instance started later knows of the run too, and one that missed the news finds a run that a transaction names in the store.
    @Test func aTestRunTakesItsTransactionsWhereverTheyLandAndOutlivesItsHome() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        let suite = JSONValue.object([
            ("name", .string("cluster")), ("party", .string("sdk")),
            ("scenarios", .array(["frictionless-y", "frictionless-n", "frictionless-a", "frictionless-u", "frictionless-r", "challenge-text"].map(JSONValue.string))),
            ("versions", .array([.string("2.2.0")])), ("channels", .array([.string("app")])),
        ])
        let started = try await client.post(cluster.publicURL + "/admin/runs", body: JSONWriter.write(.object([("suite", suite)])))
        #expect(started.status == .created, "\(started.bodyText)")
        let runID = try #require(try JSONReader.parse(started.body).value["id"]?.stringValue)
        let home = try await cluster.psql("SELECT home FROM transactions WHERE role = 'run' AND id = '\(runID)'")
        let others = cluster.instances.map(\.url).filter { $0 != home }
        #expect(others.count == 2, "the run's home \(home)")
        // Untagged: each attached by its scenario. One at each instance: the home, and the two others (the challenge).
        for (pan, url) in [("4000000000001000", home), ("4000000000003006", others[0]), ("4000000000110009", others[1])] {
            let ares = try JSONReader.parse(try await client.post(url + "/ds/areq", body: JSONWriter.write(try appAReq(pan: pan))).body).value
            #expect(["Y", "N", "C"].contains(ares["transStatus"]?.stringValue ?? "-"), "\(ares)")
        }
        func statuses(_ json: JSONValue) -> [String: String] {
            Dictionary(uniqueKeysWithValues: (json["cases"]?.arrayValue ?? []).map { ($0["scenario"]?.stringValue ?? "", $0["status"]?.stringValue ?? "") })
        }
        // Read at another instance: passed on to the run's home.
        let open = try JSONReader.parse(try await client.get(others[0] + "/admin/runs/" + runID).body).value
        #expect(statuses(open) == ["frictionless-y": "passed", "frictionless-n": "passed", "frictionless-a": "pending", "frictionless-u": "pending",
                                   "frictionless-r": "pending", "challenge-text": "running"],
                "\(JSONWriter.string(open))")

        try await cluster.killHome(role: "run", id: runID)
        let ares = try JSONReader.parse(try await client.post(cluster.publicURL + "/ds/areq", body: JSONWriter.write(try appAReq(pan: "4000000000002008"))).body).value
        #expect(ares["transStatus"]?.stringValue == "A", "\(ares)")
        // An instance started later knows of the run (the change its home kept) and has its transaction attached.
        let later = try await cluster.addInstance()
        let unavailable = try JSONReader.parse(try await client.post(later + "/ds/areq", body: JSONWriter.write(try appAReq(pan: "4000000000005001"))).body).value
        #expect(unavailable["transStatus"]?.stringValue == "U", "\(unavailable)")
        // One that missed the news (the kept change gone) finds the run a transaction names in the store.
        _ = try await cluster.psql("DELETE FROM harness_changes WHERE kind = 'run-\(runID)'")
        let uninformed = try await cluster.addInstance()
        let rejected = try await client.post(uninformed + "/ds/areq", body: JSONWriter.write(try appAReq(pan: "4000000000004004")),
                                             headers: ["X-Harness-Case": runID])
        #expect(try JSONReader.parse(rejected.body).value["transStatus"]?.stringValue == "R", "\(rejected.bodyText)")
        let finished = try await client.post(cluster.publicURL + "/admin/runs/\(runID)/finish", body: [])
        let report = try JSONReader.parse(finished.body).value
        #expect(statuses(report) == ["frictionless-y": "passed", "frictionless-n": "passed", "frictionless-a": "passed", "frictionless-u": "passed",
                                     "frictionless-r": "passed", "challenge-text": "failed"],
                "\(finished.bodyText)")
        let challenge = try #require(report["cases"]?.arrayValue?.first { $0["scenario"]?.stringValue == "challenge-text" })
        #expect(challenge["problems"] == nil, "\(JSONWriter.string(challenge))")
        #expect(JSONWriter.string(challenge).contains("the challenge had not ended when the run finished"), "\(JSONWriter.string(challenge))")
        #expect(cluster.instances.contains { $0.process.isRunning && $0.process.output.contains("a test run's home cannot be reached; taken over here") })
        // Listed through the balancer, wherever the listing is asked.
        let listing = try await client.get(cluster.publicURL + "/admin/runs")
        #expect(listing.bodyText.contains(runID), "\(listing.bodyText.prefix(500))")
    }

    /// An app challenge whose instance dies (`kill -9`) between two CReqs goes on at another instance: the store
    /// kept the secure channel's key, the counter due and the cardholder's progress (two wrong codes of three), so
    /// the next CReq is opened under the same key, and its third wrong code ends the challenge N with an RReq that
    /// counts three interactions. Sent to both surviving instances at once, it is taken up by one of them only: one
    /// CRes, one Erro, one RReq. Without the take-up that CReq is refused (Erro 301) at both.
    /// Without a balancer (no `server.publicURL`: the AReq's `dsURL` names the instance that began the transaction), a
    /// challenge taken over after that instance died still delivers its RReq: the ACS that took it sends the RReq to its
    /// own DS, which takes the DS transaction up from the store.
    @Test func withoutABalancerATakenOverChallengeDeliversItsRReq() async throws {
        let cluster = try await HarnessCluster.start(instances: 2, balanced: false)
        defer { cluster.stop() }
        let threeDSServer = try RReqReceiver()
        defer { threeDSServer.stop() }
        let client = cluster.client
        let (first, second) = (cluster.instances[0].url, cluster.instances[1].url)
        let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
        let areq = try appAReq(pan: "4000000000110009", replacing: [
            "threeDSServerURL": .string(threeDSServer.url), "sdkTransID": .string(sdk.sdkTransID), "sdkEphemPubKey": sdk.ephemeralPublicKeyJSON,
        ])
        let ares = try JSONReader.parse(try await client.post(first + "/ds/areq", body: JSONWriter.write(areq)).body).value
        let acsTransID = try #require(ares["acsTransID"]?.stringValue, "\(ares)")
        let content = try AcsSignedContent(verifying: try #require(ares["acsSignedContent"]?.stringValue),
                                           with: CertificateVerifier(trustAnchors: [try pki.rootCertificate("A000000003")]))
        // The instance itself is the acsURL (over its HTTPS listener), and its DS the AReq's dsURL.
        #expect(content.acsURL.hasSuffix("/acs/challenge") && !content.acsURL.contains(cluster.publicURL), "\(content.acsURL)")
        let channel = try SecureChannel(privateKey: sdk.ephemeralKey, peerPublicKey: content.acsEphemPubKey,
                                        sdkReferenceNumber: SimulatedSDKTransaction.sdkReferenceNumber)
        func send(_ counter: Int, _ action: CReq.Action, to url: String) async throws -> JSONValue? {
            let creq = CReq(messageVersion: .v2_2_0, threeDSServerTransID: areq["threeDSServerTransID"]?.stringValue ?? "", acsTransID: acsTransID,
                            sdkTransID: sdk.sdkTransID, counter: counter, action: action)
            let body = Array(try channel.seal(JSONWriter.write(creq.json), encryption: .a128cbcHS256, kid: acsTransID, direction: .sdkToACS).utf8)
            let answer = try await client.post(url + "/acs/challenge", body: body, contentType: "application/jose; charset=UTF-8")
            guard answer.headers.mediaType == "application/jose" else { return nil }
            return try JSONReader.parse(try channel.open(answer.bodyText, direction: .acsToSDK).plaintext).value
        }
        #expect(try await send(0, .none, to: first)?["acsUiType"]?.stringValue == "01")
        try await cluster.killHome(role: "acs", id: acsTransID)
        let final = try await send(1, .dataEntry("1234"), to: second)
        #expect(final?["transStatus"]?.stringValue == "Y", "\(String(describing: final))")
        let results = try await threeDSServer.awaitRReqs(settled: cluster.noJobsLeft)
        #expect(results.count == 1 && results.first?["transStatus"]?.stringValue == "Y", "\(results.map { JSONWriter.string($0) })")
        let acs = try JSONReader.parse(try await client.get(second + "/admin/acs/transactions/\(acsTransID)").body).value
        #expect(acs["resultsDelivery"]?.stringValue?.hasPrefix("RRes") == true, "\(acs)")
    }

    @Test func anAppChallengeWhoseInstanceDiesGoesOnAtAnother() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let threeDSServer = try RReqReceiver()
        defer { threeDSServer.stop() }
        let client = cluster.client
        let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
        // challenge-text: one text step, code 1234, three attempts.
        let areq = try appAReq(pan: "4000000000110009", replacing: [
            "threeDSServerURL": .string(threeDSServer.url), "sdkTransID": .string(sdk.sdkTransID), "sdkEphemPubKey": sdk.ephemeralPublicKeyJSON,
        ])
        let ares = try JSONReader.parse(try await client.post(cluster.publicURL + "/ds/areq", body: JSONWriter.write(areq)).body).value
        #expect(ares["transStatus"]?.stringValue == "C", "\(ares)")
        let acsTransID = try #require(ares["acsTransID"]?.stringValue)
        let signed = try #require(ares["acsSignedContent"]?.stringValue)
        let content = try AcsSignedContent(verifying: signed, with: CertificateVerifier(trustAnchors: [try pki.rootCertificate("A000000003")]))
        let channel = try SecureChannel(privateKey: sdk.ephemeralKey, peerPublicKey: content.acsEphemPubKey,
                                        sdkReferenceNumber: SimulatedSDKTransaction.sdkReferenceNumber)
        func send(_ counter: Int, _ action: CReq.Action, to url: String? = nil) async throws -> (cres: JSONValue?, answer: String) {
            let creq = CReq(messageVersion: .v2_2_0, threeDSServerTransID: areq["threeDSServerTransID"]?.stringValue ?? "", acsTransID: acsTransID,
                            sdkTransID: sdk.sdkTransID, counter: counter, action: action)
            let body = Array(try channel.seal(JSONWriter.write(creq.json), encryption: .a128cbcHS256, kid: acsTransID, direction: .sdkToACS).utf8)
            let answer = try await client.post((url ?? cluster.publicURL) + "/acs/challenge", body: body, contentType: "application/jose; charset=UTF-8")
            guard answer.headers.mediaType == "application/jose" else { return (nil, answer.bodyText) }
            return (try JSONReader.parse(try channel.open(answer.bodyText, direction: .acsToSDK).plaintext).value, answer.bodyText)
        }
        let first = try await send(0, .none)
        #expect(first.cres?["acsUiType"]?.stringValue == "01", "\(first.answer)")
        for counter in 1...2 {
            let warned = try await send(counter, .dataEntry("0000"))
            #expect(warned.cres?["challengeInfoTextIndicator"]?.stringValue == "Y", "\(warned.answer)")
        }

        try await cluster.killHome(role: "acs", id: acsTransID)
        let survivors = cluster.instances.filter { $0.process.isRunning }.map(\.url)
        async let atOne = send(3, .dataEntry("0000"), to: survivors[0])
        async let atOther = send(3, .dataEntry("0000"), to: survivors[1])
        let answers = try await [atOne, atOther]
        #expect(answers.compactMap(\.cres).map { $0["transStatus"]?.stringValue } == ["N"], "the CReq after the kill: \(answers.map(\.answer))")
        let results = try await threeDSServer.awaitRReqs(settled: cluster.noJobsLeft)
        #expect(results.count == 1, "\(results.count) RReqs: \(results.map { JSONWriter.string($0) })")
        #expect(results.first?["transStatus"]?.stringValue == "N" && results.first?["interactionCounter"]?.stringValue == "03", "\(results)")
        #expect(cluster.instances.contains { $0.process.isRunning && $0.process.output.contains("open challenge taken up from the store") })
        // Its journal entry went on too (saved open before each answer, taken up with the challenge): every CReq and CRes, the
        // end, readable through the balancer.
        let dsTransID = try #require(ares["dsTransID"]?.stringValue)
        let (status, body) = try await cluster.get(cluster.publicURL + "/inspector/transactions/" + dsTransID)
        let entry = try JSONReader.parse(Array(body.utf8)).value
        #expect(status == "200" && entry["state"]?.stringValue == "ended" && entry["transStatus"]?.stringValue == "N", "\(body.prefix(400))")
        let types = (entry["messages"]?.arrayValue ?? []).compactMap { $0["type"]?.stringValue }
        #expect(types.contains("RReq"), "\(types)")
        #expect(types.count { $0 == "CReq" } >= 4 && types.count { $0 == "CRes" } == 4, "\(types)")
    }

    /// A browser challenge of the harness's own 3DS Server whose instance dies (`kill -9`) after a wrong code goes on
    /// at another: the right code's page is answered there (the ACS takes the challenge up), its RReq reaches the
    /// 3DS Server through the DS (each takes its transaction up from the store), and the final CRes's form ends it:
    /// Y, readable through the balancer. Without the 3DS Server's take-up its RReq is refused (Erro 301) and the
    /// notification names no transaction.
    @Test func aBrowserChallengeWhoseInstanceDiesEndsAtAnother() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        func post(_ url: String, _ fields: [(String, String)]) async throws -> HTTPResponse {
            try await client.post(url, body: form(fields), contentType: "application/x-www-form-urlencoded")
        }
        let authenticated = try await client.post(cluster.publicURL + "/3ds-server/authenticate",
                                                   body: JSONWriter.write(browserRequest(pan: "4000000000110009", version: .v2_2_0)))
        let answer = try JSONReader.parse(authenticated.body).value
        let id = try #require(answer["threeDSServerTransID"]?.stringValue, "\(authenticated.bodyText)")
        let challenge = try #require(answer["browserChallenge"], "\(authenticated.bodyText)")
        let first = try await post(try #require(challenge["acsURL"]?.stringValue), [
            ("creq", challenge["creq"]?.stringValue ?? ""), ("threeDSSessionData", challenge["threeDSSessionData"]?.stringValue ?? "")])
        let page = try ACSPage(first.bodyText)
        let wrong = try await post(page.action, [("answer", "0000"), ("action", "submit")])
        #expect(wrong.bodyText.contains("class=\"info warning\""), "\(wrong.bodyText)")

        try await cluster.killHome(role: "acs", id: try #require(answer["acsTransID"]?.stringValue))
        let right = try await post(page.action, [("answer", "1234"), ("action", "submit")])
        let final = try ACSPage(right.bodyText)
        #expect(final.action == cluster.publicURL + "/3ds-server/notification", "\(right.bodyText)")
        let notified = try await post(final.action, final.fields)
        #expect(notified.status == .ok && notified.bodyText.contains("transStatus <strong>Y</strong>"), "\(notified.status) \(notified.bodyText)")
        let record = try JSONReader.parse(Array(try await cluster.get(cluster.publicURL + "/3ds-server/transactions/" + id).body.utf8)).value
        #expect(record["state"]?.stringValue == "completed" && record["transStatus"]?.stringValue == "Y", "\(JSONWriter.string(record))")
        #expect(record["messages"]?.arrayValue?.compactMap { $0["message"]?["messageType"]?.stringValue } == ["AReq", "ARes", "RReq", "RRes", "CRes"],
                "\(JSONWriter.string(record))")
    }

    /// A pin set through the balancer is set on every instance, and the store counts its uses: the next `count`
    /// transactions of the card play it wherever the balancer sends them, and not one more. Its removal, and the
    /// load mix's, reach every instance too.
    @Test func aPinSetThroughTheBalancerPlaysItsCountOfTransactionsWhereverTheyLand() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        let pan = "4000000000001000"  // frictionless-y
        let pin = try await client.post(cluster.publicURL + "/admin/pins", body: JSONWriter.write(.object([
            ("pan", .string(pan)), ("scenario", .string("frictionless-n")), ("count", .number("2")),
        ])))
        #expect(pin.status == .created, "\(pin.bodyText)")
        #expect(pin.headers["X-Harness-Instances"] == "3 of 3")
        for instance in cluster.instances {
            #expect(try await cluster.get(instance.url + "/admin/pins").body.contains("frictionless-n"), "no pin at \(instance.url)")
        }
        // Six AReqs of the card, two on each instance in round robin: the first two play the pin.
        var statuses: [String] = []
        for _ in 0..<6 {
            let ares = try JSONReader.parse(try await client.post(cluster.publicURL + "/ds/areq", body: JSONWriter.write(try appAReq(pan: pan))).body).value
            statuses.append(ares["transStatus"]?.stringValue ?? "-")
        }
        #expect(statuses == ["N", "N", "Y", "Y", "Y", "Y"], "\(statuses)")

        _ = try await client.post(cluster.publicURL + "/admin/pins", body: JSONWriter.write(.object([("pan", .string(pan)), ("scenario", .string("frictionless-n"))])))
        let removed = try await client.execute(HTTPRequest(method: .delete, target: "/admin/pins"), url: cluster.publicURL + "/admin/pins")
        #expect(removed.headers["X-Harness-Instances"] == "3 of 3")
        for instance in cluster.instances {
            #expect(try await cluster.get(instance.url + "/admin/pins").body.contains(#""pins":[]"#), "a pin left at \(instance.url)")
        }
        let mix = try await client.execute(HTTPRequest(method: .delete, target: "/admin/load-mix"), url: cluster.publicURL + "/admin/load-mix")
        #expect(mix.status == .ok && mix.headers["X-Harness-Instances"] == "3 of 3", "\(mix.status) \(mix.bodyText)")
    }

    /// An instance started after changes were made through the balancer makes them too before it is healthy: the
    /// pin (under its id: its uses are counted with the others'), the card-range change (under the same serial); a
    /// removal of every pin makes the earlier pins pointless, and the next instance started has none.
    /// A run begun at one instance begins the PReq checks anew at every instance: a 3DS Server restarted between two
    /// runs, whose PReqs reach another instance than the run's home, may ask for every range in the new run.
    @Test func aRunBegunAtOneInstanceLetsARestarted3DSServerAskAnotherForEveryRange() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        let (home, other) = (cluster.instances[0].url, cluster.instances[1].url)
        let ref = "3DS_LOA_SER_CLUS_020200_00001"
        func preq() async throws {
            let pres = try JSONReader.parse(try await client.post(other + "/ds/preq", body: JSONWriter.write(PreparationTests.preq(ref))).body).value
            #expect(pres["messageType"]?.stringValue == "PRes", "\(pres)")
        }
        try await preq()
        let suite = JSONValue.object([("suite", .object([("name", .string("PReq")), ("party", .string("3ds-server")),
                                                         ("scenarios", .array([.string("frictionless-y")])), ("versions", .array([.string("2.2.0")]))]))])
        #expect(try await client.post(home + "/admin/runs", body: JSONWriter.write(suite)).status == .created)
        // Restarted: no cache, so every range again, at the other instance.
        try await preq()
        let areq = try appAReq(pan: "4000000000001000", replacing: ["threeDSServerRefNumber": .string(ref)])
        let ares = try JSONReader.parse(try await client.post(other + "/ds/areq", body: JSONWriter.write(areq)).body).value
        let dsTransID = try #require(ares["dsTransID"]?.stringValue, "\(ares)")
        let entry = try JSONReader.parse(try await client.get(other + "/inspector/transactions/\(dsTransID)").body).value
        let verdicts = Dictionary((entry["checks"]?.arrayValue ?? []).map { ($0["id"]?.stringValue ?? "", $0["verdict"]?.stringValue ?? "") }) { first, _ in first }
        #expect(verdicts["preq.serial-number"] == "pass" && verdicts["preq.frequency"] == "pass", "\(verdicts)")
    }

    /// PostgreSQL stopped under the cluster (durability `answered`): no instance is ready, none acknowledges an AReq
    /// (each answers the Erro 403 of a transient system failure), and once it is back every AReq acknowledged is read
    /// from every instance.
    @Test func aStoreOutageAcknowledgesNothingThatIsThenMissing() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        let database = cluster.database
        try await offThePool { try database.pause() }
        var acknowledged: [String] = []
        for (index, instance) in cluster.instances.enumerated() {
            let answer = try JSONReader.parse(try await client.post(instance.url + "/ds/areq", body: JSONWriter.write(try appAReq(pan: "4000000000001000"))).body).value
            if answer["messageType"]?.stringValue == "ARes", let id = answer["dsTransID"]?.stringValue { acknowledged.append(id) }
            #expect(answer["errorCode"]?.stringValue == "403", "instance \(index): \(answer)")
            #expect(try await client.get(instance.url + "/health/ready").status == .serviceUnavailable)
        }
        try await offThePool { try database.resume() }
        for instance in cluster.instances {
            let ares = try JSONReader.parse(try await client.post(instance.url + "/ds/areq", body: JSONWriter.write(try appAReq(pan: "4000000000001000"))).body).value
            #expect(ares["transStatus"]?.stringValue == "Y", "\(ares)")
            if let id = ares["dsTransID"]?.stringValue { acknowledged.append(id) }
        }
        #expect(acknowledged.count == cluster.instances.count)
        for id in acknowledged {
            for instance in cluster.instances {
                #expect(try await client.get(instance.url + "/admin/ds/transactions/\(id)").status == .ok, "\(id) at \(instance.url)")
            }
        }
    }

    /// A load mix set through the balancer is in force at every instance, and each draws a sequence of its own from the
    /// seed: the same cards at two instances get other outcomes (20 draws of an even mix: alike once in a million). Its
    /// summary answers for the cluster. A transaction is drawn once, by its DS: with the roles calling each other through
    /// the balancer, an ACS on the other instance plays the DS's draw (the outcomes are the draws counted), not one of its own.
    @Test func eachInstanceDrawsItsOwnSequenceOfALoadMix() async throws {
        let cluster = try await HarnessCluster.start(instances: 2)
        defer { cluster.stop() }
        let client = cluster.client
        let mix = #"{"seed": 9, "mix": [{"scenario": "frictionless-y", "weight": 1}, {"scenario": "frictionless-n", "weight": 1}]}"#
        #expect(try await client.post(cluster.publicURL + "/admin/load-mix", body: Array(mix.utf8)).status == .created)
        var sequences: [[String]] = []
        for instance in cluster.instances {
            var statuses: [String] = []
            for _ in 0..<20 {
                let ares = try JSONReader.parse(try await client.post(instance.url + "/ds/areq", body: JSONWriter.write(try appAReq(pan: "4111111111111111"))).body).value
                statuses.append(ares["transStatus"]?.stringValue ?? "-")
            }
            sequences.append(statuses)
        }
        #expect(sequences.allSatisfy { Set($0) == ["Y", "N"] }, "\(sequences)")
        #expect(sequences[0] != sequences[1], "\(sequences)")
        // What the cluster drew, asked through the balancer: the sums of both instances', each listed with its own.
        let asked = try await client.get(cluster.publicURL + "/admin/load-mix")
        let summary = try JSONReader.parse(asked.body).value
        #expect(asked.headers["X-Harness-Instances"] == "2 of 2")
        let instances = summary["instances"]?.arrayValue ?? []
        #expect(Set(instances.compactMap { $0["instance"]?.stringValue }) == Set(cluster.instances.map(\.url)))
        func count(_ value: JSONValue?) -> Int { Int(value?.numberText ?? "") ?? 0 }
        let drawn = count(summary["drawn"])
        #expect(drawn == instances.reduce(0) { $0 + count($1["drawn"]) }, "\(summary)")
        #expect(drawn == (summary["byScenario"]?.objectMembers ?? []).reduce(0) { $0 + count($1.value) } && summary["latencyAdded"] == nil)
        #expect(instances.allSatisfy { count($0["drawn"]) == 20 }, "\(instances)")
        #expect(drawn == 40, "\(summary)")
        let answeredN = sequences.joined().count { $0 == "N" }
        #expect(count(summary["byScenario"]?["frictionless-n"]) == answeredN, "the ACS played the DS's draws: \(summary) \(sequences)")
        // A test run's transaction is not the mix's: its DS draws nothing and says so to the ACS, which draws nothing either
        // (the card's own scenario, frictionless Y, every time).
        for instance in cluster.instances {
            for _ in 0..<10 {
                let answer = try await client.post(instance.url + "/ds/areq", body: JSONWriter.write(try appAReq(pan: "4111111111111111")),
                                                   headers: [HarnessCaseHeader.name: "a-pipeline-run"])
                #expect(try JSONReader.parse(answer.body).value["transStatus"]?.stringValue == "Y", "\(answer.bodyText)")
            }
        }
        let afterRun = try JSONReader.parse(try await client.get(cluster.publicURL + "/admin/load-mix").body).value
        #expect(count(afterRun["drawn"]) == 40, "\(afterRun)")
    }

    @Test func anInstanceStartedLaterMakesTheChangesMadeBefore() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        let pan = "4000000000001000"  // frictionless-y
        let pin = try await client.post(cluster.publicURL + "/admin/pins", body: JSONWriter.write(.object([
            ("pan", .string(pan)), ("scenario", .string("frictionless-n")), ("count", .number("2")), ("expiresIn", .number("600")),
        ])))
        #expect(pin.status == .created, "\(pin.bodyText)")
        func pres(_ url: String, since serial: String? = nil) async throws -> JSONValue {
            try JSONReader.parse(try await client.post(url + "/ds/preq", body: JSONWriter.write(PreparationTests.preq(serialNum: serial))).body).value
        }
        let before = try #require(try await pres(cluster.instances[0].url)["serialNum"]?.stringValue)
        let listing = try JSONReader.parse(Array(try await cluster.get(cluster.instances[0].url + "/admin/ds/card-ranges").body.utf8)).value
        let range = try #require(listing["cardRangeData"]?.arrayValue?.first)
        let change = JSONValue.object([("actionInd", .string("D")), ("startRange", range["startRange"] ?? .null), ("endRange", range["endRange"] ?? .null)])
        #expect(try await client.post(cluster.publicURL + "/admin/ds/card-ranges", body: JSONWriter.write(change)).status.code < 300)
        let after = try await pres(cluster.instances[0].url, since: before)
        // The pin ages two seconds before the next instance starts (a clock passing, not a wait for a state).
        try await Task.sleep(for: .seconds(2))

        let later = try await cluster.addInstance()
        let pins = try JSONReader.parse(Array(try await cluster.get(later + "/admin/pins").body.utf8)).value
        let laterPin = try #require(pins["pins"]?.arrayValue?.first, "no pin at the instance started later: \(pins)")
        #expect(laterPin["scenario"]?.stringValue == "frictionless-n" && laterPin["pan"]?.stringValue == "400000******1000", "\(laterPin)")
        #expect((laterPin["expiresIn"]?.numberText.flatMap(Int.init) ?? 600) <= 598, "it lives as long as where it was set: \(laterPin)")
        let since = try await pres(later, since: before)
        #expect(since["serialNum"] == after["serialNum"] && since["cardRangeData"] == after["cardRangeData"], "\(since) against \(after)")
        // The pin's two uses, between the instance started later and another: then the card's own scenario.
        var statuses: [String] = []
        for url in [later, cluster.instances[0].url, later] {
            let ares = try JSONReader.parse(try await client.post(url + "/ds/areq", body: JSONWriter.write(try appAReq(pan: pan))).body).value
            statuses.append(ares["transStatus"]?.stringValue ?? "-")
        }
        #expect(statuses == ["N", "N", "Y"], "\(statuses)")

        let removed = try await client.execute(HTTPRequest(method: .delete, target: "/admin/pins"), url: cluster.publicURL + "/admin/pins")
        #expect(removed.headers["X-Harness-Instances"] == "4 of 4", "\(removed.status) \(removed.bodyText)")
        // What the store keeps to make again: the removal made the pin's change pointless.
        #expect(try await cluster.psql("SELECT string_agg(kind || ' ' || method, ', ' ORDER BY seq) FROM harness_changes") == "card-ranges POST, pins DELETE")
        let last = try await cluster.addInstance()
        #expect(try await cluster.get(last + "/admin/pins").body.contains(#""pins":[]"#))
        #expect(try await pres(last, since: before)["serialNum"] == after["serialNum"])
    }

    /// Two teams' changes through the balancer stay theirs on every instance, one started later too: red's pin plays for red's
    /// transactions alone and outlives the shared scope's DELETE; blue's reset ends blue's mix everywhere and leaves red's pin.
    @Test func eachTeamsChangesStayItsOwnOnEveryInstanceAndOneStartedLater() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        let pan = "4111111111111111"  // no scenario's: the default, Y
        let pin = try await client.post(cluster.publicURL + "/teams/red/admin/pins", body: Array(#"{"pan": "\#(pan)", "scenario": "frictionless-n", "count": 3}"#.utf8))
        #expect(pin.status == .created && pin.headers["X-Harness-Instances"] == "3 of 3", "\(pin.bodyText)")
        let mix = try await client.post(cluster.publicURL + "/teams/blue/admin/load-mix", body: Array(#"{"mix": [{"scenario": "frictionless-r", "weight": 1}]}"#.utf8))
        #expect(mix.status == .created, "\(mix.bodyText)")
        // Red deletes a range of another scheme: its own serial 1; blue's and no team's ranges stay at serial 0.
        let ranges = try JSONReader.parse(Array(try await cluster.get(cluster.publicURL + "/admin/ds/card-ranges").body.utf8)).value
        let mastercard = try #require(ranges["cardRangeData"]?.arrayValue?.first { $0["startRange"]?.stringValue?.hasPrefix("5") == true })
        let deletion = JSONValue.object([("actionInd", .string("D")), ("startRange", mastercard["startRange"] ?? .null), ("endRange", mastercard["endRange"] ?? .null)])
        let changed = try await client.post(cluster.publicURL + "/teams/red/admin/ds/card-ranges", body: JSONWriter.write(deletion))
        #expect(changed.status == .created && changed.headers["X-Harness-Instances"] == "3 of 3", "\(changed.bodyText)")
        let shared = try await client.execute(HTTPRequest(method: .delete, target: "/admin/pins"), url: cluster.publicURL + "/admin/pins")
        #expect(shared.bodyText.contains(#""removed":0"#), "\(shared.bodyText)")
        let later = try await cluster.addInstance()
        func serial(_ url: String) async throws -> String {
            try JSONReader.parse(Array(try await cluster.get(url).body.utf8)).value["serialNum"]?.stringValue ?? "-"
        }
        let redSerial = try await serial(later + "/teams/red/admin/ds/card-ranges")
        #expect(redSerial.hasSuffix("-1") && redSerial.count <= 20, "\(redSerial)")
        #expect(try await serial(cluster.instances[2].url + "/teams/red/admin/ds/card-ranges") == redSerial, "one epoch of red's on every instance")
        #expect(try await serial(later + "/teams/blue/admin/ds/card-ranges").hasSuffix("-0"))
        #expect(try await serial(cluster.instances[1].url + "/admin/ds/card-ranges").hasSuffix("-0"))
        let redPins = try JSONReader.parse(Array(try await cluster.get(later + "/teams/red/admin/pins").body.utf8)).value["pins"]?.arrayValue ?? []
        #expect(redPins.count == 1 && redPins.first?["team"]?.stringValue == "red", "\(redPins)")
        #expect(try await cluster.get(later + "/admin/pins").body.contains(#""pins":[]"#))
        func transStatus(_ url: String, team: String?) async throws -> String {
            let path = (team.map { "/teams/\($0)" } ?? "") + "/ds/areq"
            return try JSONReader.parse(try await client.post(url + path, body: JSONWriter.write(try appAReq(pan: pan))).body).value["transStatus"]?.stringValue ?? "-"
        }
        #expect(try await transStatus(later, team: "red") == "N")
        #expect(try await transStatus(cluster.instances[0].url, team: "red") == "N")
        #expect(try await transStatus(later, team: "blue") == "R")
        #expect(try await transStatus(cluster.instances[1].url, team: "blue") == "R")
        #expect(try await transStatus(later, team: nil) == "Y")

        let reset = try await client.execute(HTTPRequest(method: .delete, target: "/teams/blue/admin/team"), url: cluster.publicURL + "/teams/blue/admin/team")
        #expect(reset.status == .ok && reset.headers["X-Harness-Instances"] == "4 of 4", "\(reset.status) \(reset.bodyText)")
        #expect(try await transStatus(later, team: "blue") == "Y")
        #expect(try await transStatus(cluster.instances[2].url, team: "red") == "N", "red's third use: blue's reset left it")
        // Kept per team: blue's reset made blue's mix pointless, and red's pin is still to be made by an instance started later.
        let kept = try await cluster.psql("SELECT string_agg(kind || ' ' || method, ', ' ORDER BY seq) FROM harness_changes")
        #expect(kept == "pins:red POST, card-ranges:red POST, pins DELETE, team:blue DELETE", "\(kept)")
    }

    /// An upgrade as docs/operations.md has it, under load through the balancer: each instance in turn gets SIGTERM, drains
    /// (not ready, still serving) while HAProxy's checks move traffic away, exits 0 and starts again on its port. Four clients
    /// sending AReqs all the while, each answered 300 ms late (so that some are in flight at every SIGTERM), get an ARes Y to
    /// every one, and the store holds every transaction they were answered.
    @Test func aRollingRestartOfEveryInstanceUnderLoadLosesNoRequest() async throws {
        let cluster = try await HarnessCluster.start(server: "drainSeconds: 1")
        defer { cluster.stop() }
        let mix = try await cluster.client.post(cluster.publicURL + "/admin/load-mix",
                                                body: Array(#"{"mix": [{"scenario": "frictionless-y", "weight": 1}], "latency": {"ds": {"fixedMs": 300}}}"#.utf8))
        #expect(mix.status == .created, "\(mix.bodyText)")
        let load = AReqLoad(clients: 4, url: cluster.publicURL + "/ds/areq", pan: "4111111111111111", client: cluster.client)
        for index in cluster.instances.indices {
            let before = load.answered
            #expect(try await cluster.restart(index) == 0, "instance \(index) did not exit 0 after SIGTERM")
            // Load went on while it restarted (a state: answers counted since, not a time).
            let deadline = ContinuousClock.now + .seconds(30)
            while load.answered < before + 20, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        }
        let (answered, failures) = await load.stop()
        #expect(failures.isEmpty, "\(failures.count) of \(answered + failures.count) AReqs failed: \(failures.prefix(5))")
        #expect(answered >= 60, "\(answered) AReqs answered")
        #expect(try await cluster.psql("SELECT count(*) FROM transactions WHERE role = 'ds'") == String(answered))
    }

    /// PRes faults armed through the balancer are armed on every instance, and the store counts their uses: with
    /// `count` 1 the next PReq, wherever it lands, is answered with them, and the one after, at another instance, is not.
    /// A PRes case of a run: its PReq answered by one instance, the 3DS Server's Erro about the spoilt PRes posted to
    /// another (a balancer's next choice). The Erro is passed on to the instance that answered the PReq, which grades it:
    /// the case passes, as on one instance.
    @Test func anErroAboutASpoiltPResReachesTheInstanceThatAnsweredItsPReq() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        let scenario = "negative-pres-missing-dsTransID"
        let suite = JSONValue.object([("name", .string("pres")), ("party", .string("3ds-server")), ("versions", .array([.string("2.2.0")])),
                                      ("scenarios", .array([.string(scenario)]))])
        let started = try JSONReader.parse(try await client.post(cluster.publicURL + "/admin/runs", body: JSONWriter.write(.object([("suite", suite)]))).body).value
        let id = try #require(started["id"]?.stringValue, "\(started)")
        let reference = "3DS_LOA_SER_TEST_020200_00009"
        let arming = JSONValue.object([("scenario", .string(scenario)), ("threeDSServerRefNumber", .string(reference))])
        let armed = try await client.post(cluster.publicURL + "/admin/ds/pres-faults", body: JSONWriter.write(arming))
        #expect(armed.status == .created && armed.headers["X-Harness-Instances"] == "3 of 3", "\(armed.status) \(armed.bodyText)")
        let preq = PreparationTests.preq(reference)
        let tagged: HTTPHeaders = [HarnessCaseHeader.name: id]
        let pres = try JSONReader.parse(try await client.post(cluster.instances[0].url + "/ds/preq", body: JSONWriter.write(preq), headers: tagged).body).value
        #expect(pres["messageType"]?.stringValue == "PRes" && pres["dsTransID"] == nil, "\(pres)")
        let erro = ErroMessage(messageVersion: "2.2.0", errorCode: .requiredElementMissing, errorComponent: .threeDSServer, errorDetail: "dsTransID",
                               errorMessageType: "PRes", threeDSServerTransID: preq["threeDSServerTransID"]?.stringValue)
        let taken = try await client.post(cluster.instances[1].url + "/ds/preq", body: JSONWriter.write(erro.json), headers: tagged)
        #expect(taken.status == .ok, "\(taken.status) \(taken.bodyText)")
        let finished = try JSONReader.parse(try await client.post(cluster.publicURL + "/admin/runs/\(id)/finish", body: []).body).value
        let graded = try #require(finished["cases"]?.arrayValue?.first, "\(finished)")
        #expect(graded["status"]?.stringValue == "passed", "\(JSONWriter.string(graded))")
        #expect(try await cluster.metric("threeds_cluster_passed_on_total", labels: "outcome=\"answered\"") >= 1)
    }

    @Test func armedPResFaultsAreUsedOnceWhereverThePReqLands() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        let arm = JSONValue.object([("faults", .array([.object([("fault", .string("missing-field")), ("value", .string("serialNum"))])])),
                                    ("count", .number("1"))])
        let armed = try await client.post(cluster.publicURL + "/admin/ds/pres-faults", body: JSONWriter.write(arm))
        #expect(armed.status == .created && armed.headers["X-Harness-Instances"] == "3 of 3", "\(armed.status) \(armed.bodyText)")
        var serials: [String?] = []
        for instance in [1, 2, 0] {
            let body = JSONWriter.write(PreparationTests.preq(serialNum: nil))
            let pres = try JSONReader.parse(try await client.post(cluster.instances[instance].url + "/ds/preq", body: body).body).value
            serials.append(pres["serialNum"]?.stringValue)
        }
        #expect(serials.map { $0 == nil } == [true, false, false], "the PRes's serialNum at each instance: \(serials)")
    }

    /// A 3DS Server's Erro about an ARes reaches the DS through whichever instance: it is recorded on the
    /// transaction at the instance that holds it (where a rehearsal grades it), not dropped as unknown.
    @Test func anErroAboutAnAResReachesTheInstanceThatHoldsTheTransaction() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        let areq = try appAReq(pan: "4000000000001000")
        let ares = try JSONReader.parse(try await client.post(cluster.instances[0].url + "/ds/areq", body: JSONWriter.write(areq)).body).value
        let dsTransID = try #require(ares["dsTransID"]?.stringValue)
        let erro = JSONValue.object([
            ("messageType", .string("Erro")), ("messageVersion", .string("2.2.0")), ("errorCode", .string("203")),
            ("errorComponent", .string("S")), ("errorDescription", .string("Format or value of one or more data elements is invalid")),
            ("errorDetail", .string("eci")), ("errorMessageType", .string("ARes")),
            ("threeDSServerTransID", areq["threeDSServerTransID"] ?? .null), ("dsTransID", .string(dsTransID)),
        ])
        let taken = try await client.post(cluster.instances[1].url + "/ds/areq", body: JSONWriter.write(erro))
        #expect(taken.status == .ok, "\(taken.status) \(taken.bodyText)")
        let record = try await cluster.get(cluster.instances[0].url + "/admin/ds/transactions/" + dsTransID).body
        #expect(record.contains("Erro 203"), "\(record)")
    }

    /// An instance whose `cluster.instanceURL` does not answer as itself refuses to start, and says why: the others would
    /// pass its transactions' requests on to another instance, or to nothing. It is not announced to the others meanwhile.
    @Test func anInstanceWhoseURLIsNotItsOwnRefusesToStart() async throws {
        let cluster = try await HarnessCluster.start(instances: 1)
        defer { cluster.stop() }
        let taken = try await cluster.serve(instanceURL: cluster.instances[0].url)
        #expect(taken.status == 1 && taken.output.contains("cluster.instanceURL \(cluster.instances[0].url) is answered by another instance"),
                "\(taken.status): \(taken.output.suffix(600))")
        let refusing = try RefusingPort()
        let nowhere = "http://127.0.0.1:\(refusing.port)"
        let unreachable = try await cluster.serve(instanceURL: nowhere)
        withExtendedLifetime(refusing) {}
        #expect(unreachable.status == 1 && unreachable.output.contains("cluster.instanceURL \(nowhere) cannot be reached from this instance"),
                "\(unreachable.status): \(unreachable.output.suffix(600))")
        #expect(try await cluster.psql("SELECT count(*) FROM harness_instances") == "1")
    }

    /// A 3DS Server's PReqs may reach any instance: the serial one gave is known to the others (not Erro 307),
    /// and a card-range change made through the balancer reaches every instance under the same serial.
    @Test func cardRangeSerialsAgreeAcrossInstances() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let client = cluster.client
        func pres(_ instance: Int, since serial: String? = nil) async throws -> JSONValue {
            let body = JSONWriter.write(PreparationTests.preq(serialNum: serial))
            return try JSONReader.parse(try await client.post(cluster.instances[instance].url + "/ds/preq", body: body).body).value
        }
        let first = try await pres(0)
        let serial = try #require(first["serialNum"]?.stringValue, "\(first)")
        let again = try await pres(1, since: serial)
        #expect(again["messageType"]?.stringValue == "PRes" && again["serialNum"]?.stringValue == serial, "\(again)")

        let listing = try JSONReader.parse(Array(try await cluster.get(cluster.instances[2].url + "/admin/ds/card-ranges").body.utf8)).value
        let range = try #require(listing["cardRangeData"]?.arrayValue?.first)
        let change = JSONValue.object([("actionInd", .string("D")), ("startRange", range["startRange"] ?? .null), ("endRange", range["endRange"] ?? .null)])
        let changed = try await client.post(cluster.publicURL + "/admin/ds/card-ranges", body: JSONWriter.write(change))
        #expect(changed.status.code < 300 && changed.headers["X-Harness-Instances"] == "3 of 3", "\(changed.status) \(changed.bodyText)")
        var serials: Set<String> = []
        for instance in 0..<3 {
            let since = try await pres(instance, since: serial)
            #expect(since["cardRangeData"]?.arrayValue?.map { $0["actionInd"]?.stringValue } == ["D"], "\(since)")
            serials.insert(since["serialNum"]?.stringValue ?? "-")
        }
        #expect(serials.count == 1 && !serials.contains(serial), "\(serials)")
    }
}

/// A 3DS Server under test, at its own URL: keeps each RReq it receives and answers its RRes.
final class RReqReceiver: Sendable {
    private let group = EventLoopGroup(loopCount: 1)
    private let server: HTTPServer
    private let rreqs = Received()
    let url: String

    private final class Received: Sendable {
        let list = Mutex<[JSONValue]>([])
    }

    init() throws {
        var router = Router()
        router.post("/rreq") { [rreqs] request, _ in
            let rreq = (try? JSONReader.parse(request.body).value) ?? .null
            rreqs.list.withLock { $0.append(rreq) }
            let rres = JSONValue.object([
                ("messageType", .string("RRes")), ("messageVersion", rreq["messageVersion"] ?? .null),
                ("threeDSServerTransID", rreq["threeDSServerTransID"] ?? .null), ("acsTransID", rreq["acsTransID"] ?? .null),
                ("dsTransID", rreq["dsTransID"] ?? .null), ("sdkTransID", rreq["sdkTransID"] ?? .null), ("resultsStatus", .string("01")),
            ])
            return HTTPResponse(headers: ["Content-Type": "application/json"], body: JSONWriter.write(rres))
        }
        server = try HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", httpPort: 0, httpsPort: nil, tls: nil),
                                router: router, group: group, logger: silentLogger)
        try server.start()
        url = "http://127.0.0.1:\(server.httpPort ?? 0)/rreq"
    }

    var received: [JSONValue] { rreqs.list.withLock { $0 } }

    /// The RReqs once the first came (within 45 s) and `settled` holds (within 30 s): the cluster has no job left that
    /// could send a second one, which must not come, or an Erro about the RRes (a wrong one here would bring it; a job
    /// is finished only once its exchange ended).
    func awaitRReqs(settled: () async throws -> Bool) async throws -> [JSONValue] {
        let clock = ContinuousClock()
        let first = clock.now + .seconds(45)
        while received.isEmpty, clock.now < first { try await Task.sleep(for: .milliseconds(100)) }
        let quiet = clock.now + .seconds(30)
        while try await !settled() {
            guard clock.now < quiet else { Issue.record("the cluster kept a job for 30 s after the first RReq"); break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return received
    }

    func stop() {
        server.shutdown()
        group.shutdown()
    }
}

/// Clients sending AReqs of a card whose scenario is frictionless Y, one after another until stopped: what each got.
final class AReqLoad: Sendable {
    private final class Tally: Sendable {
        let stopped = Atomic<Bool>(false)
        let outcomes = Mutex<(answered: Int, failures: [String])>((0, []))
    }

    private let tally = Tally()
    private let clients: Task<Void, Never>

    init(clients count: Int, url: String, pan: String, client: HTTPClient) {
        clients = Task { [tally] in
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        while !tally.stopped.load(ordering: .relaxed) {
                            do {
                                let answer = try await client.post(url, body: JSONWriter.write(try appAReq(pan: pan)))
                                let status = (try? JSONReader.parse(answer.body).value)?["transStatus"]?.stringValue
                                tally.outcomes.withLock { status == "Y" ? $0.answered += 1 : $0.failures.append("HTTP \(answer.status.code) \(answer.bodyText.prefix(200))") }
                            } catch {
                                tally.outcomes.withLock { $0.failures.append("\(error)") }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The AReqs answered with an ARes Y so far.
    var answered: Int { tally.outcomes.withLock { $0.answered } }

    /// Stops the clients once their AReqs under way are answered: the answered count, and what each failure was.
    func stop() async -> (answered: Int, failures: [String]) {
        tally.stopped.store(true, ordering: .relaxed)
        await clients.value
        return tally.outcomes.withLock { $0 }
    }
}
