import ArgumentParser
import CalWatchCore
import CalWatchRuntime
import Foundation

extension CalwatchCommand {
    /// `calwatch pass`: the boarding passes joined with the calendar's flights.
    struct Pass: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Keep boarding passes: their seat, class and check-in number join the calendar's flights.",
            discussion: """
                A boarding pass's barcode (IATA BCBP, the text in the PDF417 or Aztec code of every airline's \
                pass), or a wallet pass's .pkpass file, is kept in the first folder of passes: in config.yml (default \
                ~/.local/share/calwatch/passes). Each leg joins the calendar's flight with the same number on the \
                same day of the year at the departure airport and the same route: data.flight.pass carries what \
                the pass says, and data.flight.seat its seat. A barcode carries no time, so a barcode without a \
                calendar item waits for one (calwatch check names it); a wallet pass with a time is a flight of its \
                own where no calendar has it (calendar "Boarding passes"). A running calwatch watch sees a pass \
                added at once, and detects its flight again with the seat.

                Examples:
                  calwatch pass add 'M1DESMARAIS/LUC       EAB12C3 YULFRAAC 0834 326J003A0027 100'
                  calwatch pass add ~/Downloads/BoardingPass.pkpass
                  zbarimg -q boarding-pass.png | calwatch pass add -
                  calwatch pass list
                  calwatch pass remove AB12C3-AC834-326.bcbp
                """,
            subcommands: [Add.self, List.self, Remove.self])
    }
}

extension CalwatchCommand.Pass {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read boarding passes' barcodes and keep them.",
            discussion: """
                Each argument is a barcode's text, or a wallet pass's .pkpass file (its files checked against its \
                manifest, its signature checked and who signed it said, its barcode read; a signature of another \
                pass is refused as altered); - reads one barcode per line from standard input, where zbarimg's \
                "PDF417:" prefix is allowed. A text or file that is not a boarding pass is refused with why \
                (exit 65), and nothing given is kept.
                """)

        @Argument(
            help: ArgumentHelp(
                "Barcode texts (M1…), wallet passes (.pkpass files), or - for standard input.", valueName: "pass"))
        var barcodes: [String]

        @OptionGroup var settings: ConfigurationOptions

        func run() async throws {
            let configuration = try settings.loadOrExit(calendars: nil, useDefaultFile: true)
            guard let folder = configuration.passes.first else {
                StandardStreams.error("calwatch: passes: is empty in the configuration; name a folder for passes\n")
                throw ExitCode.usageError
            }
            var texts: [String] = []
            for barcode in barcodes {
                if barcode == "-" {
                    // At most a folder of passes, each a line of a barcode's length: a stranger's stream is not read
                    // without end.
                    let largest = BoardingPasses.filesPerFolder * (BoardingPass.largest + 32)
                    let input = (try? FileHandle.standardInput.read(upToCount: largest + 1)) ?? Data()
                    guard input.count <= largest else {
                        StandardStreams.error(
                            "calwatch: standard input holds more than \(BoardingPasses.filesPerFolder) barcodes' "
                                + "worth (\(largest >> 20) MiB); give one barcode a line\n")
                        throw ExitCode.dataError
                    }
                    for line in String(decoding: input, as: UTF8.self).split(whereSeparator: \.isNewline)
                    where !line.allSatisfy(\.isWhitespace) {
                        texts.append(Self.withoutSymbology(String(line)))
                    }
                } else {
                    texts.append(barcode)
                }
            }
            // Every pass read before any is kept: a refused one leaves the folder as it was.
            var passes: [(kept: Data, suffix: String, pass: BoardingPass)] = []
            var verdicts: [Int: WalletPassSignature.Verdict] = [:]
            for (index, text) in texts.enumerated() {
                if text.hasSuffix(".pkpass") {
                    // Read once: the bytes kept are the bytes checked.
                    switch BoardingPasses.file(at: text).flatMap({ data in
                        BoardingPasses.pass(in: data, wallet: true).map { (data, $0) }
                    }) {
                    case .success(let (data, pass)):
                        // A signature of another pass is an altered pass; one Apple does not vouch for is said.
                        let verdict = await Self.signature(of: data)
                        if let verdict, case .invalid = verdict {
                            StandardStreams.error(
                                "calwatch: \(text): altered: \(verdict); ask the airline for the pass again\n")
                            throw ExitCode.dataError
                        }
                        verdicts[passes.count] = verdict
                        passes.append((data, ".pkpass", pass))
                    case .failure(let problem):
                        StandardStreams.error("calwatch: \(text): \(problem.reason)\n")
                        throw ExitCode.dataError
                    }
                    continue
                }
                do {
                    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                    passes.append((Data((trimmed + "\n").utf8), ".bcbp", try BoardingPass(barcode: text)))
                } catch {
                    StandardStreams.error(
                        "calwatch: barcode \(index + 1) is not a boarding pass: \(error); "
                            + "give the whole text of the pass's barcode (it starts with M and the number of legs)\n")
                    throw ExitCode.dataError
                }
            }
            guard !passes.isEmpty else {
                StandardStreams.error("calwatch: no barcode given\n")
                throw ExitCode.usageError
            }
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                for (index, (kept, suffix, pass)) in passes.enumerated() {
                    let path = folder + "/" + Self.fileName(pass) + suffix
                    try AtomicFile.replace(path, with: kept, mode: 0o600)
                    print("kept \(path)" + (verdicts[index].map { " (wallet pass, \($0))" } ?? ""))
                    for leg in pass.legs { print("  " + Self.describe(leg, now: Date())) }
                }
            } catch {
                StandardStreams.error("calwatch: cannot keep the pass in \(folder): \(error)\n")
                throw ExitCode.ioError
            }
        }

        /// What a wallet pass's signature says, `nil` for bytes that are not one.
        static func signature(of data: Data) async -> WalletPassSignature.Verdict? {
            guard let wallet = try? WalletPass(archive: data) else { return nil }
            return await WalletPassSignature.check(wallet)
        }

        /// zbarimg writes `PDF417:M1…`, `QR-Code:M1…`.
        static func withoutSymbology(_ line: String) -> String {
            guard let colon = line.firstIndex(of: ":"), line[..<colon].count <= 16,
                line[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }),
                line[line.index(after: colon)...].hasPrefix("M")
            else { return line }
            return String(line[line.index(after: colon)...])
        }

        /// `AB12C3-AC834-326`: the first leg's booking reference, flight and day; letters and digits only.
        static func fileName(_ pass: BoardingPass) -> String {
            let leg = pass.legs[0]
            let booking = String(leg.bookingReference.filter { $0.isASCII && ($0.isLetter || $0.isNumber) })
            return "\(booking.isEmpty ? "pass" : booking)-\(leg.code)-\(leg.dayOfYear)"
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the boarding passes kept, leg by leg.")

        @OptionGroup var settings: ConfigurationOptions

        func run() async throws {
            let configuration = try settings.loadOrExit(calendars: nil, useDefaultFile: true)
            let passes = BoardingPasses.read(folders: configuration.passes)
            for problem in passes.problems { StandardStreams.error("calwatch: passes: \(problem)\n") }
            var file: String?
            for entry in passes.entries {
                if entry.file != file {
                    var wallet = ""
                    if entry.signed != nil, case .success(let data) = BoardingPasses.file(at: entry.file),
                        let verdict = await Add.signature(of: data)
                    {
                        wallet = " (wallet pass, \(verdict))"
                    }
                    print("\(entry.file): \(TerminalText.safe(entry.passenger, keepingLines: false))\(wallet)")
                    file = entry.file
                }
                print("  " + Add.describe(entry.leg, now: Date()))
            }
            if passes.entries.isEmpty {
                print("no boarding passes in \(configuration.passes.joined(separator: ", "))")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a kept boarding pass by its file's name.")

        @Argument(help: ArgumentHelp("The pass's file, as calwatch pass list names it.", valueName: "name"))
        var name: String

        @OptionGroup var settings: ConfigurationOptions

        func run() async throws {
            let configuration = try settings.loadOrExit(calendars: nil, useDefaultFile: true)
            let base = (name as NSString).lastPathComponent
            // Only a pass of the configured folders: the name is never a path to follow elsewhere.
            guard BoardingPasses.isPass(base),
                let path = configuration.passes.map({ $0 + "/" + base }).first(where: {
                    FileManager.default.fileExists(atPath: $0)
                })
            else {
                StandardStreams.error("calwatch: no pass \(base) in \(configuration.passes.joined(separator: ", "))\n")
                throw ExitCode.dataError
            }
            guard unlink(path) == 0 else {
                StandardStreams.error("calwatch: cannot remove \(path): \(String(cString: strerror(errno)))\n")
                throw ExitCode.ioError
            }
            print("removed \(path)")
        }
    }
}

extension CalwatchCommand.Pass.Add {
    /// `AC834 YUL→FRA on 22 Nov (day 326), seat 3A, class J, check-in 27, booking AB12C3`.
    static func describe(_ leg: BoardingPass.Leg, now: Date) -> String {
        TerminalText.safe(
            "\(leg.code) \(leg.origin)→\(leg.destination) on \(date(ofDay: leg.dayOfYear, near: now)), \(leg.details)",
            keepingLines: false)
    }

    /// The day of the year `day` of the year it most likely falls in: from yesterday on, within a year.
    static func date(ofDay day: Int, near now: Date) -> String {
        let today = CalendarDate(daysSinceEpoch: Int64((now.timeIntervalSince1970 / 86_400).rounded(.down)))
        for year in [today.year, today.year + 1] {
            let date = CalendarDate(
                daysSinceEpoch: CalendarDate(year: year, month: 1, day: 1).daysSinceEpoch + Int64(day - 1))
            if date.year == year, date.daysSinceEpoch >= today.daysSinceEpoch - 1 { return "\(date) (day \(day))" }
        }
        return "day \(day)"
    }
}
