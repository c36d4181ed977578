// Package folders is `abctl folders`: create, rename and delete the folders
// that group agents. Listing them is `abctl get folders`.
package folders

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/get"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NewCmd returns `abctl folders`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "folders",
		Aliases: []string{"folder"},
		Short:   "Create, update and delete folders (list them with 'abctl get folders')",
		Args:    cmdutil.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCreateCmd(f), newUpdateCmd(f), newDeleteCmd(f))
	return cmd
}

// printFolder writes the folder on stdout in the chosen format.
func printFolder(f *cmdutil.Factory, format printer.Format, folder *client.Folder) error {
	return get.FolderListing(folder).Print(f.IO, f.Now(), format)
}

func newCreateCmd(f *cmdutil.Factory) *cobra.Command {
	var description, output string
	cmd := &cobra.Command{
		Use:     "create TITLE",
		Short:   "Create a folder",
		Example: "  abctl folders create Billing --description 'Invoices and payments'",
		Args:    cmdutil.ExactArgs(1, "the folder's title"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			req := &client.FolderCreateRequest{Title: args[0], Description: description}
			folder, err := c.Folders.Create(cmd.Context(), req)
			if err != nil {
				return fmt.Errorf("create the folder: %w", err)
			}
			return printFolder(f, format, folder)
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "the folder's description")
	printer.AddFlag(cmd, &output, printer.Name, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

func newUpdateCmd(f *cmdutil.Factory) *cobra.Command {
	var title, description, output string
	cmd := &cobra.Command{
		Use:     "update FOLDER_ID",
		Short:   "Change a folder's title or description",
		Example: "  abctl folders update fld_123 --title Payments",
		Args:    cmdutil.ExactArgs(1, "a folder id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			fl := cmd.Flags()
			if !fl.Changed("title") && !fl.Changed("description") {
				return cmdutil.Usagef(cmd, "give --title, --description or both")
			}
			id, err := resource.Folder.Arg(cmd, args[0])
			if err != nil {
				return err
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			req := &client.FolderUpdateRequest{}
			if fl.Changed("title") {
				req.Title = &title
			}
			if fl.Changed("description") {
				req.Description = &description
			}
			folder, err := c.Folders.Update(cmd.Context(), id, req)
			if err != nil {
				return fmt.Errorf("update folder %s: %w", id, err)
			}
			return printFolder(f, format, folder)
		},
	}
	cmd.Flags().StringVar(&title, "title", "", "the new title")
	cmd.Flags().StringVar(&description, "description", "", "the new description")
	printer.AddFlag(cmd, &output, printer.Name, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

func newDeleteCmd(f *cmdutil.Factory) *cobra.Command {
	var withAgents, yes bool
	cmd := &cobra.Command{
		Use:   "delete FOLDER_ID",
		Short: "Delete a folder (its agents move out of it, or go with --delete-agents)",
		Args:  cmdutil.ExactArgs(1, "a folder id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := resource.Folder.Arg(cmd, args[0])
			if err != nil {
				return err
			}
			if withAgents && !yes {
				if !f.IO.CanPrompt() {
					return cmdutil.Usagef(cmd, "--delete-agents deletes every agent of the folder: add --yes when no terminal can confirm")
				}
				ok, err := cmdutil.Confirm(f.IO, fmt.Sprintf("Delete folder %s and every agent in it?", id))
				if err != nil || !ok {
					return cmdutil.Silent(cmdutil.ExitError)
				}
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			res, err := c.Folders.Delete(cmd.Context(), id, &client.DeleteFolderOptions{DeleteAgents: withAgents})
			if err != nil {
				return fmt.Errorf("delete folder %s: %w", id, err)
			}
			msg := "its agents are no longer in a folder"
			if res.WorkflowsDeleted {
				msg = "its agents were deleted"
			}
			fmt.Fprintf(f.IO.ErrOut, "Folder %s deleted; %s.\n", id, msg)
			return nil
		},
	}
	cmd.Flags().BoolVar(&withAgents, "delete-agents", false, "delete the folder's agents too")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}
